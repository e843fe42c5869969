// Package config renders HAProxy configs from templates: a suite's own,
// which lives beside the suite (RenderText), or one the toolkit owns in
// fixtures/templates (Render). Every template can use the shared "global"
// block (fixtures/templates/_global.tmpl).
package config

import (
	"bytes"
	"fmt"
	"text/template"

	"github.com/harp-project/harp/fixtures"
)

// Render executes the named template (e.g. "cluster.cfg.tmpl") with data.
func Render(name string, data any) (string, error) {
	t, err := template.New(name).Option("missingkey=error").ParseFS(fixtures.Templates, "templates/*.tmpl")
	if err != nil {
		return "", fmt.Errorf("config templates: %w", err)
	}
	return execute(t, name, data)
}

// RenderText parses a template given as text (with the shared blocks
// available) and executes it, for user-supplied configs and tests.
func RenderText(name, text string, data any) (string, error) {
	t, err := template.New(name).Option("missingkey=error").ParseFS(fixtures.Templates, "templates/_*.tmpl")
	if err == nil {
		t, err = t.New(name).Parse(text)
	}
	if err != nil {
		return "", fmt.Errorf("config template %s: %w", name, err)
	}
	return execute(t, name, data)
}

func execute(t *template.Template, name string, data any) (string, error) {
	if t.Lookup(name) == nil {
		return "", fmt.Errorf("config template %s: no such template", name)
	}
	var b bytes.Buffer
	if err := t.ExecuteTemplate(&b, name, data); err != nil {
		return "", fmt.Errorf("config template %s: %w", name, err)
	}
	return b.String(), nil
}

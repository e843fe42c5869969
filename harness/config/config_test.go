package config

import (
	"strings"
	"testing"
)

func TestRender3517(t *testing.T) {
	cfg, err := Render("3517.cfg.tmpl", map[string]any{
		"Threads": 1, "LocalPeer": "harp", "Table": "marker",
		"Sections": []struct {
			Name string
			Port int
		}{{"first", 10001}, {"second", 10002}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"nbthread 1", "localpeer harp", "stats socket ipv4@0.0.0.0:9998 level admin",
		"peers first\n    peer harp 127.0.0.1:10001\n    table marker type ip size 100 expire 1h store gpc0",
		"peers second\n    peer harp 127.0.0.1:10002"} {
		if !strings.Contains(cfg, want) {
			t.Errorf("config lacks %q:\n%s", want, cfg)
		}
	}
}

func TestTemplateErrors(t *testing.T) {
	if _, err := Render("3517.cfg.tmpl", map[string]any{"Threads": 1}); err == nil || !strings.Contains(err.Error(), "config template 3517.cfg.tmpl") {
		t.Errorf("missing data: err = %v", err)
	}
	if _, err := Render("nope.cfg.tmpl", nil); err == nil || !strings.Contains(err.Error(), "no such template") {
		t.Errorf("unknown template: err = %v", err)
	}
	if _, err := RenderText("user.cfg", "{{template \"global\" .}\n", nil); err == nil || !strings.Contains(err.Error(), "config template user.cfg") {
		t.Errorf("syntax error: err = %v", err)
	}
	out, err := RenderText("user.cfg", "{{template \"global\" .}}\nfrontend f\n", map[string]any{"Threads": 2, "LocalPeer": ""})
	if err != nil || !strings.Contains(out, "nbthread 2") || strings.Contains(out, "localpeer") {
		t.Errorf("RenderText = %q, %v", out, err)
	}
}

package config

import (
	"strings"
	"testing"
)

func TestRenderCapture(t *testing.T) {
	cfg, err := Render("capture.cfg.tmpl", map[string]any{"Threads": 1, "LocalPeer": "harp"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"nbthread 1", "localpeer harp", "stats socket ipv4@0.0.0.0:9998 level admin",
		"peers cluster\n    peer harp 127.0.0.1:10000\n    peer remote 127.0.0.1:10999"} {
		if !strings.Contains(cfg, want) {
			t.Errorf("config lacks %q:\n%s", want, cfg)
		}
	}
}

func TestTemplateErrors(t *testing.T) {
	if _, err := Render("capture.cfg.tmpl", map[string]any{"Threads": 1}); err == nil || !strings.Contains(err.Error(), "config template capture.cfg.tmpl") {
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

package text

import (
	"strings"
	"testing"
)

func TestFirstLine(t *testing.T) {
	for s, want := range map[string]string{
		"\n  Permission denied  \nmore\n": "Permission denied",
		"":                                "",
		strings.Repeat("x", 130):          strings.Repeat("x", 120),
	} {
		if got := FirstLine(s, 120); got != want {
			t.Errorf("FirstLine(%q) = %q, want %q", s, got, want)
		}
	}
}

func TestFirstAlert(t *testing.T) {
	out := "[NOTICE]   (1) : haproxy version is 3.2\n[ALERT]    (1) : config : parsing [x.cfg:9]: unknown keyword\n[ALERT] second\n"
	if got := FirstAlert(out); got != "[ALERT]    (1) : config : parsing [x.cfg:9]: unknown keyword" {
		t.Errorf("FirstAlert = %q", got)
	}
	if got := FirstAlert("  Configuration file is valid\n"); got != "Configuration file is valid" {
		t.Errorf("FirstAlert without an alert = %q", got)
	}
}

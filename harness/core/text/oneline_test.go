package text

import (
	"strings"
	"testing"
)

func TestOneLine(t *testing.T) {
	for s, want := range map[string]string{
		"exit 0\n  Configuration file is valid\n": "exit 0 Configuration file is valid",
		"":                       "",
		strings.Repeat("x", 210): strings.Repeat("x", 200) + "...",
	} {
		if got := OneLine(s, 200); got != want {
			t.Errorf("OneLine(%q) = %q, want %q", s, got, want)
		}
	}
}

package text

import "testing"

func TestHTTPCode(t *testing.T) {
	if got := HTTPCode(0); got != "no answer" {
		t.Errorf("0: %q", got)
	}
	if got := HTTPCode(503); got != "503" {
		t.Errorf("503: %q", got)
	}
}

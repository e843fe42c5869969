package runtimelimits

import "testing"

func TestStatRowName(t *testing.T) {
	for _, c := range []struct{ proxy, server, want string }{
		{"web", "FRONTEND", "frontend web"},
		{"slow", "BACKEND", "backend slow"},
		{"slow", "s1", "server slow/s1"},
	} {
		if got := statRowName(c.proxy, c.server); got != c.want {
			t.Errorf("statRowName(%q, %q) = %q, want %q", c.proxy, c.server, got, c.want)
		}
	}
}

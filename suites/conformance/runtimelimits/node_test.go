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

// KINDS picks rounds by check id; a bisect of one kind's bug runs that
// kind alone.
func TestSelectedKinds(t *testing.T) {
	if got := selected(""); len(got) != len(Kinds) {
		t.Errorf("empty: %d kinds", len(got))
	}
	got := selected("disable-and-enable-the-frontend, frontend-maxconn-0-and-back")
	if len(got) != 2 || got[0].Name != "frontend maxconn 0 and back" || got[1].Name != "disable and enable the frontend" {
		t.Errorf("two kinds: %v", got)
	}
	if err := checkKinds("frontend-maxconn-0-and-back"); err != nil {
		t.Error(err)
	}
	if err := checkKinds("frontend-maxconn"); err == nil {
		t.Error("a kind that does not exist was accepted")
	}
}

package suiteenv

import (
	"fmt"
	"testing"
)

func TestList(t *testing.T) {
	type kind struct{ Name, Slug string }
	ks := []kind{{"right after start", "early"}, {"10,000 entries", "10k"}}
	got := List(ks, func(k kind) string { return fmt.Sprintf("%s (%s)", k.Name, k.Slug) }, ", ")
	if want := "right after start (early), 10,000 entries (10k)"; got != want {
		t.Errorf("List = %q, want %q", got, want)
	}
	if got := List([]string{"a"}, func(s string) string { return s }, "; "); got != "a" {
		t.Errorf("List of one = %q", got)
	}
	if got := List(nil, func(s string) string { return s }, "; "); got != "" {
		t.Errorf("List of none = %q", got)
	}
}

// The texts issue3517's and issue3519's steps had before LanesText.
func TestLanesText(t *testing.T) {
	for _, c := range []struct {
		n          int
		noun, want string
	}{
		{1, "reload", "one node"},
		{3, "reload", "up to 3 nodes side by side, the reloads spread over them (reload i on node (i-1) mod 3, each node's reloads one after another)"},
		{5, "trial", "up to 5 nodes side by side, the trials spread over them (trial i on node (i-1) mod 5, each node's trials one after another)"},
	} {
		if got := LanesText(c.n, c.noun); got != c.want {
			t.Errorf("LanesText(%d, %q) = %q, want %q", c.n, c.noun, got, c.want)
		}
	}
}

package upstreamfixes

import (
	"testing"

	"github.com/harp-project/harp/harness/fixcase"
)

// Every case the judge knows has one way to reach HAProxy: its file's
// kind, and a Go drive or session exactly when that kind needs one; every
// drive and session names a case the judge knows.
func TestEveryCaseReaches(t *testing.T) {
	known := map[string]bool{}
	for _, c := range Cases {
		known[c.ID] = true
		if c.Kind == "" {
			t.Errorf("%s: no kind", c.ID)
		}
		if _, ok := drives[c.ID]; ok != (c.Kind == fixcase.Steps) {
			t.Errorf("case %s (kind %s): a drive %v", c.ID, c.Kind, ok)
		}
		if _, ok := sessions[c.ID]; ok != (c.Kind == fixcase.PeerSession) {
			t.Errorf("case %s (kind %s): a session %v", c.ID, c.Kind, ok)
		}
	}
	for _, m := range []map[string]bool{keys(drives), keys(sessions)} {
		for id := range m {
			if !known[id] {
				t.Errorf("%s reaches HAProxy but the judge has no such case", id)
			}
		}
	}
}

func keys[V any](m map[string]V) map[string]bool {
	out := map[string]bool{}
	for k := range m {
		out[k] = true
	}
	return out
}

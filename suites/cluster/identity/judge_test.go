package identity

import (
	"testing"

	"github.com/harp-project/harp/harness/cluster"
)

func TestJudge(t *testing.T) {
	base := Facts{How: cluster.ByFlag, Ghost: "node3", Keys: 10}
	for _, c := range []struct {
		name             string
		edit             func(f *Facts)
		violation, unmet string
	}{
		// Observed on every build: HAProxy removes the misnamed node's section.
		{"section removed, no key: held", func(f *Facts) {}, "", ""},
		{"keys on the ghost", func(f *Facts) { f.KeysOnGhost = 4 }, "4 of 10 keys reached node3 although its local peer name (ghost, by -L) matches no peer line", ""},
		{"keys on a ghost that can sync are still the violation", func(f *Facts) { f.KeysOnGhost, f.GhostCanSync = 10, true },
			"10 of 10 keys reached node3 although its local peer name (ghost, by -L) matches no peer line", ""},
		{"absence on a node that can sync proves nothing", func(f *Facts) { f.GhostCanSync = true }, "",
			"node3 runs the peers section with a link up yet received none of the keys: absence cannot be told from delay"},
		{"a node that did not take the name: the setup's failure", func(f *Facts) { f.Misnamed, f.KeysOnGhost = "node3 runs the section as node3, not ghost", 10 },
			"", "node3 runs the section as node3, not ghost"},
		{"the well-named nodes did not replicate", func(f *Facts) { f.Control = "control failed: only 3 of 10 keys" }, "", "control failed: only 3 of 10 keys"},
	} {
		f := base
		c.edit(&f)
		v, u := Judge(f)
		if v != c.violation || u != c.unmet {
			t.Errorf("%s:\n got  %q, %q\n want %q, %q", c.name, v, u, c.violation, c.unmet)
		}
	}
}

package judge

import (
	"testing"

	"github.com/harp-project/harp/harness/core/obs"
	"github.com/harp-project/harp/harness/core/verdict"
)

func TestJudge(t *testing.T) {
	base := Facts{How: "-L", Ghost: "node3", Keys: 10, Peering: obs.Opt(obs.Value(Peering{})), KeysOnGhost: obs.Opt(obs.Value(0))}
	keys := func(n int) obs.Optional[int] { return obs.Opt(obs.Value(n)) }
	canSync := obs.Opt(obs.Value(Peering{Local: "ghost", CanSync: true}))
	for _, c := range []struct {
		name             string
		edit             func(f *Facts)
		violation, unmet string
		want             verdict.Verdict
	}{
		// Observed on every build: HAProxy removes the misnamed node's section.
		{"section removed, no key: held", func(f *Facts) {}, "", "", verdict.Pass},
		{"keys on the ghost", func(f *Facts) { f.KeysOnGhost = keys(4) }, "4 of 10 keys reached node3 although its local peer name (ghost, by -L) matches no peer line", "", verdict.Reproduced},
		{"keys on a ghost that can sync are still the violation", func(f *Facts) { f.KeysOnGhost, f.Peering = keys(10), canSync },
			"10 of 10 keys reached node3 although its local peer name (ghost, by -L) matches no peer line", "", verdict.Reproduced},
		{"absence on a node that can sync proves nothing", func(f *Facts) { f.Peering = canSync }, "",
			"node3 runs the peers section with a link up yet received none of the keys: absence cannot be told from delay", verdict.Inconclusive},
		{"a node that did not take the name: the setup's failure", func(f *Facts) {
			f.Peering, f.KeysOnGhost = obs.Opt(obs.Value(Peering{Local: "node3", CanSync: true})), obs.Optional[int]{}
		}, "", "node3 runs the section as node3, not ghost: the setup (-L) did not take", verdict.Inconclusive},
		{"the well-named nodes did not replicate", func(f *Facts) {
			f.Control, f.Peering, f.KeysOnGhost = "control failed: only 3 of 10 keys", obs.Optional[Peering]{}, obs.Optional[int]{}
		}, "", "control failed: only 3 of 10 keys", verdict.Inconclusive},
		// Harness faults, which today's code called an ERROR: unknown.
		{"show peers on the ghost failed", func(f *Facts) {
			f.Peering, f.KeysOnGhost = obs.Opt(obs.Failure[Peering]("show peers: EOF")), obs.Optional[int]{}
		}, "", "", verdict.Inconclusive},
		{"the ghost's table could not be read: never an absence", func(f *Facts) {
			f.KeysOnGhost = obs.Opt(obs.Failure[int]("show table cluster/tbl: i/o timeout"))
		}, "", "", verdict.Inconclusive},
	} {
		f := base
		c.edit(&f)
		v, u := Trial(f)
		if v != c.violation || u != c.unmet {
			t.Errorf("%s:\n got  %q, %q\n want %q, %q", c.name, v, u, c.violation, c.unmet)
		}
		tr := verdict.Trial{N: 1, Violation: v, Unmet: u, Evidence: &f}
		if got, _, reason := verdict.Decide(verdict.Outcome{Trials: []verdict.Trial{tr}}, "identities"); got != c.want {
			t.Errorf("%s: %s (%s), want %s", c.name, got, reason, c.want)
		}
	}
}

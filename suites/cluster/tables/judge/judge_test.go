package judge

import (
	"testing"

	"github.com/harp-project/harp/harness/core/obs"
	"github.com/harp-project/harp/harness/core/verdict"
)

func TestJudge(t *testing.T) {
	keys := func(n int) obs.Optional[int] { return obs.Opt(obs.Value(n)) }
	base := Facts{Odd: "node3", Keys: 10, Keytype: keys(0), Store: keys(10)}
	for _, c := range []struct {
		name             string
		edit             func(f *Facts)
		violation, unmet string
		want             verdict.Verdict
	}{
		// Observed on every build: the ip-keyed node3 holds no keytype key.
		{"no keytype key once the marker arrived: held", func(f *Facts) {}, "", "", verdict.Pass},
		{"keytype keys applied", func(f *Facts) { f.Keytype = keys(10) }, "node3 applied 10 of 10 updates of cluster/keytype although its key type (ip) differs from the sender's (string)", "", verdict.Reproduced},
		{"a failed control is never a violation", func(f *Facts) {
			f.Control, f.Keytype, f.Store = "control failed: only 3 of 10 keys of cluster/store", obs.Optional[int]{}, obs.Optional[int]{}
		}, "", "control failed: only 3 of 10 keys of cluster/store", verdict.Inconclusive},
		{"absence before the marker arrived proves nothing", func(f *Facts) { f.Marker = "the identical table cluster/tbl, written last: only 5 of 10" },
			"", "the identical table cluster/tbl, written last: only 5 of 10", verdict.Inconclusive},
		{"presence needs no marker", func(f *Facts) { f.Keytype, f.Marker = keys(2), "no marker" }, "node3 applied 2 of 10 updates of cluster/keytype although its key type (ip) differs from the sender's (string)", "", verdict.Reproduced},
		// Harness faults, which today's code called an ERROR: unknown.
		{"the odd node's keytype table unread: never an absence", func(f *Facts) { f.Keytype = obs.Opt(obs.Failure[int]("show table cluster/keytype: EOF")) }, "", "", verdict.Inconclusive},
		{"the odd node's store table unread", func(f *Facts) { f.Store = obs.Opt(obs.Failure[int]("show table cluster/store: i/o timeout")) }, "", "", verdict.Inconclusive},
	} {
		f := base
		c.edit(&f)
		v, u := Exchange(f)
		if v != c.violation || u != c.unmet {
			t.Errorf("%s:\n got  %q, %q\n want %q, %q", c.name, v, u, c.violation, c.unmet)
		}
		tr := verdict.Trial{N: 1, Violation: v, Unmet: u, Evidence: &f}
		if got, _, reason := verdict.Decide(verdict.Outcome{Trials: []verdict.Trial{tr}}, "runs"); got != c.want {
			t.Errorf("%s: %s (%s), want %s", c.name, got, reason, c.want)
		}
	}
}

package judge

import (
	"testing"
	"time"

	"github.com/harp-project/harp/harness/core/obs"
	"github.com/harp-project/harp/harness/core/verdict"
)

func TestJudge(t *testing.T) {
	ok := Facts{Cut: "node3", SawCut: true, Keys: 40, Leaked: obs.Opt(obs.Value(0))}
	missing := func(m map[string][]string) obs.Optional[map[string][]string] { return obs.Opt(obs.Value(m)) }
	for _, c := range []struct {
		name             string
		edit             func(f *Facts)
		violation, unmet string
		want             verdict.Verdict
	}{
		{"reconverged: held", func(f *Facts) {}, "", "", verdict.Pass},
		{"keys missing with every link up: the violation", func(f *Facts) {
			f.StillMissing = missing(map[string][]string{"node1": {"p1-c000"}, "node2": {"p1-c000", "p1-c001"}})
		},
			"2 of 40 keys not on every node 30s after the heal, with every link up (node1 lacks 1, node2 lacks 2)", "", verdict.Reproduced},
		{"keys missing once nothing was in flight: decided then", func(f *Facts) {
			f.StillMissing = missing(map[string][]string{"node2": {"p1-c001"}})
			f.Settled = 1200 * time.Millisecond
		},
			"1 of 40 keys not on every node after the heal, with every link up and nothing left in flight (every update pushed and acknowledged, 1.2s into the wait) (node2 lacks 1)", "", verdict.Reproduced},
		{"links that never came back are the network's", func(f *Facts) {
			f.LinksBack = "the cluster never meshed and synced within 30s: node1->node3 (last_status=CONN) (network probe: Docker shows node3 off the cluster network)"
		}, "", "after the heal: the cluster never meshed and synced within 30s: node1->node3 (last_status=CONN) (network probe: Docker shows node3 off the cluster network)", verdict.Inconclusive},
		{"a cut the doctor never saw", func(f *Facts) { f.SawCut, f.Leaked = false, obs.Optional[int]{} }, "", "the cut did not take: harp doctor still saw the links to node3 up 20s after it", verdict.Inconclusive},
		{"keys that crossed the cut", func(f *Facts) { f.Leaked = obs.Opt(obs.Value(3)) }, "", "the cut did not take: 3 keys written on node3 during the cut reached the other side", verdict.Inconclusive},
		{"no mesh before the cut", func(f *Facts) {
			f.MeshBefore, f.SawCut, f.Leaked = "node1->node3 (last_status=CONN)", false, obs.Optional[int]{}
		},
			"", "before the cut: node1->node3 (last_status=CONN)", verdict.Inconclusive},
		// Harness faults, which today's code called an ERROR: unknown.
		{"node1's table unread during the cut", func(f *Facts) { f.Leaked = obs.Opt(obs.Failure[int]("show table cluster/tbl: EOF")) }, "", "", verdict.Inconclusive},
		{"the re-read after the heal failed: never missing keys", func(f *Facts) {
			f.StillMissing = obs.Opt(obs.Failure[map[string][]string]("show table cluster/tbl: i/o timeout"))
		}, "", "", verdict.Inconclusive},
	} {
		f := ok
		c.edit(&f)
		v, u := Partition(f)
		if v != c.violation || u != c.unmet {
			t.Errorf("%s:\n got  %q, %q\n want %q, %q", c.name, v, u, c.violation, c.unmet)
		}
		tr := verdict.Trial{N: 1, Violation: v, Unmet: u, Evidence: &f}
		if got, _, reason := verdict.Decide(verdict.Outcome{Trials: []verdict.Trial{tr}}, "partitions"); got != c.want {
			t.Errorf("%s: %s (%s), want %s", c.name, got, reason, c.want)
		}
	}
}

package judge

import (
	"testing"
	"time"

	"github.com/harp-project/harp/harness/core/obs"
	"github.com/harp-project/harp/harness/core/verdict"
)

func TestJudge(t *testing.T) {
	b := 60 * time.Second
	none := obs.Opt(obs.Value(map[string]int{}))
	done := obs.Opt(obs.Value(""))
	for _, c := range []struct {
		name             string
		f                Facts
		violation, unmet string
		want             verdict.Verdict
	}{
		{"held", Facts{Kind: "a reload teaches", Tables: 300, Entries: 100, Bound: b, Missing: none, Resync: done}, "", "", verdict.Pass},
		{"entries of the last tables missing", Facts{Kind: "a fresh node learns", Tables: 300, Entries: 100, Bound: b, Resync: done,
			Missing: obs.Opt(obs.Value(map[string]int{"cluster/t0300": 10, "cluster/t0299": 10, "cluster/t0298": 10, "cluster/t0297": 10, "cluster/t0296": 10, "cluster/t0295": 10}))},
			"a fresh node learns: 60 of 100 entries missing or wrong after 1m0s (t0295 10, t0296 10, t0297 10, t0298 10, t0299 10, and 1 more tables)", "", verdict.Reproduced},
		{"entries missing once the resync finished decide early", Facts{Kind: "a reload teaches", Tables: 300, Entries: 100, Bound: b, Resync: done, FinalAfter: 1234 * time.Millisecond,
			Missing: obs.Opt(obs.Value(map[string]int{"cluster/t0300": 10}))},
			"a reload teaches: 10 of 100 entries missing or wrong once its resync had finished (1.234s) (t0300 10)", "", verdict.Reproduced},
		{"resync never finished", Facts{Kind: "a reload teaches", Tables: 300, Entries: 100, Bound: b, Missing: none, Resync: obs.Opt(obs.Value("initial resync of section cluster never finished (flags=0x1 after 1m0s)"))},
			"a reload teaches: initial resync of section cluster never finished (flags=0x1 after 1m0s)", "", verdict.Reproduced},
		{"no initial mesh", Facts{Kind: "initial resync", Tables: 300, Entries: 100, Bound: b, Mesh: obs.Opt(obs.Value([]string{"node1: initial resync not finished"}))},
			"initial resync: with 300 tables the nodes did not mesh and finish their initial resync within 1m0s: node1: initial resync not finished", "", verdict.Reproduced},
		{"setup failed", Facts{Kind: "a reload teaches", Setup: "reloading A: no new worker"}, "", "a reload teaches: reloading A: no new worker", verdict.Inconclusive},
		// Harness failures today's code read as HAProxy's.
		{"a socket read error is not a mesh that never formed", Facts{Kind: "initial resync", Tables: 300, Entries: 100, Bound: b,
			Mesh: obs.Opt(obs.Failure[[]string]("show peers at the end of 1m0s: node2: i/o timeout"))}, "", "", verdict.Inconclusive},
		{"an unreadable table is not missing entries", Facts{Kind: "a reload teaches", Tables: 300, Entries: 100, Bound: b, Resync: done,
			Missing: obs.Opt(obs.Failure[map[string]int]("reading cluster/t0291: EOF"))}, "", "", verdict.Inconclusive},
		{"show peers kept failing is not a resync that never finished", Facts{Kind: "a reload teaches", Tables: 300, Entries: 100, Bound: b, Missing: none,
			Resync: obs.Opt(obs.Failure[string]("show peers on worker 8 kept failing for 1m0s: EOF"))}, "", "", verdict.Inconclusive},
	} {
		v, u := Check(c.f)
		if v != c.violation || u != c.unmet {
			t.Errorf("%s:\n got  %q, %q\n want %q, %q", c.name, v, u, c.violation, c.unmet)
		}
		tr := verdict.Trial{N: 1, Violation: v, Unmet: u, Evidence: &c.f}
		if got, _, reason := verdict.Decide(verdict.Outcome{Trials: []verdict.Trial{tr}}, "checks"); got != c.want {
			t.Errorf("%s: %s (%s), want %s", c.name, got, reason, c.want)
		}
	}
}

package judge

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/harp-project/harp/harness/core/obs"
	"github.com/harp-project/harp/harness/core/verdict"
)

func TestJudge(t *testing.T) {
	none, clean := obs.Opt(obs.Value(map[string][]string{})), obs.Opt(obs.Value(""))
	for _, c := range []struct {
		name             string
		f                Facts
		violation, unmet string
		want             verdict.Verdict
	}{
		{"every key kept: held", Facts{How: "all at once", Keys: 50, WrongData: clean}, "", "", verdict.Pass},
		{"keys lost", Facts{How: "all at once", Keys: 50, WrongData: clean, StillMissing: obs.Opt(obs.Value(map[string][]string{"node2": {"pre-001", "pre-002"}, "node3": {"pre-001"}}))},
			"after reloading all at once, 2 of 50 keys written before are not on every node (node2 lacks 2, node3 lacks 1)", "", verdict.Reproduced},
		{"a failed reload is not HAProxy losing keys", Facts{How: "one after another", Keys: 50, Problems: []string{"node2: no new worker after SIGUSR2"}},
			"", "reloads one after another: node2: no new worker after SIGUSR2", verdict.Inconclusive},
		{"no mesh after the reloads", Facts{How: "all at once", Keys: 50, MeshAfter: "node1->node3 (last_status=CONN)"}, "", "after the reloads: node1->node3 (last_status=CONN)", verdict.Inconclusive},
		{"wrong data", Facts{How: "all at once", Keys: 50, StillMissing: none, WrongData: obs.Opt(obs.Value("1 replicated entries hold other data"))}, "1 replicated entries hold other data", "", verdict.Reproduced},
		// Harness faults, which today's code called an ERROR: unknown.
		{"the re-read failed: never lost keys", Facts{How: "all at once", Keys: 50, WrongData: clean,
			StillMissing: obs.Opt(obs.Failure[map[string][]string]("show table cluster/tbl: EOF"))}, "", "", verdict.Inconclusive},
		{"the data could not be read", Facts{How: "all at once", Keys: 50, WrongData: obs.Opt(obs.Failure[string]("show table cluster/tbl: i/o timeout"))}, "", "", verdict.Inconclusive},
	} {
		v, u := Round(c.f)
		if v != c.violation || u != c.unmet {
			t.Errorf("%s:\n got  %q, %q\n want %q, %q", c.name, v, u, c.violation, c.unmet)
		}
		tr := verdict.Trial{N: 1, Violation: v, Unmet: u, Evidence: &c.f}
		if got, _, reason := verdict.Decide(verdict.Outcome{Trials: []verdict.Trial{tr}}, "rounds"); got != c.want {
			t.Errorf("%s: %s (%s), want %s", c.name, got, reason, c.want)
		}
	}
	if u := UnmetBefore(map[string][]string{"node3": {"pre-001"}}, nil, 50); u == "" {
		t.Error("a key missing before the round was not an unmet precondition")
	}
	if u := UnmetBefore(nil, errors.New("EOF"), 50); u == "" {
		t.Error("keys that could not be read before the round were not an unmet precondition")
	}
}

func TestRoundSettled(t *testing.T) {
	f := Facts{How: "one after another", Keys: 50, StillMissing: obs.Opt(obs.Value(map[string][]string{"node2": {"k1"}})), WrongData: obs.Opt(obs.Value("")), Settled: 1500 * time.Millisecond}
	v, u := Round(f)
	if u != "" || !strings.HasSuffix(v, "with nothing left in flight (every update pushed and acknowledged, 1.5s into the wait)") {
		t.Errorf("settled: %q %q", v, u)
	}
}

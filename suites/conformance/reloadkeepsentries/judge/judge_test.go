package judge

import (
	"fmt"
	"testing"
	"time"

	"github.com/harp-project/harp/harness/core/obs"
	"github.com/harp-project/harp/harness/core/verdict"
)

func TestJudge(t *testing.T) {
	ok := func(f Facts) Facts {
		f.Sections, f.Entries, f.WrittenBefore = 1, 100, 100
		if f.Kind == "" {
			f.Kind = "remote peer down"
		}
		return f
	}
	kept, finished := obs.Opt(obs.Value(Loss{})), obs.Opt(obs.Value(""))
	lost := func(l Loss) obs.Optional[Loss] { return obs.Opt(obs.Value(l)) }
	died := obs.Opt(obs.Value(obs.Exit{Process: "the new worker 12", Code: 139, Signal: "Segmentation fault"}))
	for _, c := range []struct {
		name                     string
		f                        Facts
		violation, unmet, remark string
		want                     verdict.Verdict
	}{
		{"every entry kept: held", ok(Facts{Age: time.Second, AgeBound: 2 * time.Second, Loss: kept, ResyncAfter: finished}), "", "", "", verdict.Pass},
		{"entries lost", ok(Facts{Loss: lost(Loss{Lost: map[string]int{"s1/t": 40}}), ResyncAfter: finished}), "remote peer down: 40 of 100 entries lost (s1/t 40)", "", "", verdict.Reproduced},
		{"data changed and resync never finished",
			ok(Facts{Loss: lost(Loss{Wrong: map[string]int{"s1/t": 2}}), ResyncAfter: obs.Opt(obs.Value("initial resync of section s1 never finished (flags=0x1 after 20s)"))}),
			"remote peer down: 2 of 100 entries hold other data (s1/t 2); the new worker's initial resync of section s1 never finished (flags=0x1 after 20s)", "", "", verdict.Reproduced},
		{"three sections, one lost whole (#3517's signature)",
			Facts{Kind: "three sections", Sections: 3, Entries: 100, WrittenBefore: 300, Loss: lost(Loss{Lost: map[string]int{"s2/t": 100, "s3/t": 100}}), ResyncAfter: finished},
			"three sections: 200 of 300 entries lost (s2/t 100, s3/t 100)", "", "", verdict.Reproduced},
		{"a new worker that died is a violation", ok(Facts{Died: died, Loss: kept, ResyncAfter: finished}),
			"remote peer down: the new worker 12 exited with code 139 (Segmentation fault)", "", "", verdict.Reproduced},
		{"an old worker crashing after teaching everything is a remark (2.6.12, three sections)",
			Facts{Kind: "three sections", Sections: 3, Entries: 100, WrittenBefore: 300, OldCrash: "exited with code 139 (Segmentation fault) during soft-stop", Loss: kept, ResyncAfter: finished},
			"", "", "three sections: the old worker exited with code 139 (Segmentation fault) during soft-stop, after teaching every entry", verdict.Pass},
		{"an old worker crashing with entries lost is named in the violation",
			ok(Facts{Loss: lost(Loss{Lost: map[string]int{"s1/t": 1}}), OldCrash: "exited with code 134 (Aborted) during soft-stop", ResyncAfter: finished}),
			"remote peer down: 1 of 100 entries lost (s1/t 1); the old worker exited with code 134 (Aborted) during soft-stop", "", "", verdict.Reproduced},
		{"old worker never finished its resync: a loss says nothing",
			ok(Facts{ResyncBefore: "initial resync of section s1 never finished (flags=0x0 after 20s)"}),
			"", "remote peer down: before the reload: initial resync of section s1 never finished (flags=0x0 after 20s)", "", verdict.Inconclusive},
		{"remote peer never up", ok(Facts{Kind: "remote peer up", RemoteBefore: "the remote peer played by harp was never established on the old worker (10 s)"}),
			"", "remote peer up: the remote peer played by harp was never established on the old worker (10 s)", "", verdict.Inconclusive},
		{"entries not all written", Facts{Kind: "10,000 entries", Sections: 1, Entries: 10000, WrittenBefore: 9000}, "", "10,000 entries: before the reload only 9000 of 10000 entries written read back", "", verdict.Inconclusive},
		{"too old for right after start", ok(Facts{Kind: "right after start", MaxAge: 5 * time.Second, Age: 4 * time.Second, AgeBound: 5260 * time.Millisecond}),
			"", "right after start: the worker may have been 5.3s old at the reload, not surely under 5s", "", verdict.Inconclusive},
		{"too young for long after", ok(Facts{Kind: "long after start", MinAge: 6 * time.Second, Age: 2 * time.Second}), "", "long after start: the worker was 2s old at the reload, not over 6s", "", verdict.Inconclusive},
		{"reload failed", ok(Facts{ReloadErr: "no new worker after 20s"}), "", "remote peer down: reload: no new worker after 20s", "", verdict.Inconclusive},
		// Harness faults: unknown through the one rule, never a violation,
		// unless the new worker was seen dead, which explains them.
		{"table unreadable after", ok(Facts{Loss: obs.Opt(obs.Failure[Loss]("show table s1/t: connection refused")), ResyncAfter: finished}), "", "", "", verdict.Inconclusive},
		{"show peers kept failing after: not a resync that never finished", ok(Facts{Loss: kept,
			ResyncAfter: obs.Opt(obs.Failure[string]("show peers on worker 12 kept failing for 20s: EOF"))}), "", "", "", verdict.Inconclusive},
		{"a dead worker's tables are lost, not unread", ok(Facts{Died: died, Loss: obs.Opt(obs.Failure[Loss]("show table s1/t: no such worker")),
			ResyncAfter: obs.Opt(obs.Failure[string]("show peers on worker 12 kept failing for 20s: EOF"))}),
			"remote peer down: the new worker 12 exited with code 139 (Segmentation fault)", "", "", verdict.Reproduced},
	} {
		v, u, r := Reload(c.f)
		if v != c.violation || u != c.unmet || r != c.remark {
			t.Errorf("%s:\n got  %q, %q, %q\n want %q, %q, %q", c.name, v, u, r, c.violation, c.unmet, c.remark)
		}
		tr := verdict.Trial{N: 1, Violation: v, Unmet: u, Remark: r, Evidence: &c.f}
		if got, _, reason := verdict.Decide(verdict.Outcome{Trials: []verdict.Trial{tr}}, "reloads"); got != c.want {
			t.Errorf("%s: %s (%s), want %s", c.name, got, reason, c.want)
		}
	}
}

// Each reload's facts are checks named by its kind, so a finding (and the
// scoreboard) can tell a loss right after start from one of three sections.
func TestJudgeChecks(t *testing.T) {
	f := Facts{Kind: "right after start", Sections: 1, Entries: 100, WrittenBefore: 100,
		Loss: obs.Opt(obs.Value(Loss{Lost: map[string]int{"harp/t": 100}})), ResyncAfter: obs.Opt(obs.Value(""))}
	cs, v, u, _ := ReloadChecks(f, "early")
	if v == "" || u != "" {
		t.Fatalf("violation %q, unmet %q", v, u)
	}
	var failed, held []string
	for _, c := range cs {
		if c.Held {
			held = append(held, c.ID)
		} else {
			failed = append(failed, c.ID)
		}
	}
	if fmt.Sprint(failed) != "[entries-kept.early]" || fmt.Sprint(held) != "[resync-finished.early]" {
		t.Errorf("failed %v, held %v; want [entries-kept.early], [resync-finished.early]", failed, held)
	}
	f.Setup = "no node"
	if cs, _, u, _ := ReloadChecks(f, "early"); cs != nil || u == "" {
		t.Errorf("an unmet precondition lists checks %v (unmet %q)", cs, u)
	}
}

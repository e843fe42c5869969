package judge

import (
	"strings"
	"testing"
	"time"

	"github.com/harp-project/harp/harness/core/cliout"
	"github.com/harp-project/harp/harness/core/obs"
	"github.com/harp-project/harp/harness/core/verdict"
)

func TestJudge(t *testing.T) {
	ok := func(f Facts) Facts {
		f.Break, f.Recovery, f.Bound = "a missing map file", "SIGUSR2", 15*time.Second
		return f
	}
	held := Facts{FailedBefore: 0, Master: obs.Value(obs.Exit{}), OldPID: 14,
		Procs: obs.Value(ProcsAfter{Failed: 1, Counted: true, OldListed: true}), HTTP: obs.Value(200),
		EntryWant: "1", Entry: obs.Value("1"), Signals: obs.Value(Signals{}), Recovered: true, HTTPRecovered: obs.Opt(obs.Value(200))}
	with := func(change func(*Facts)) Facts {
		f := ok(held)
		change(&f)
		return f
	}
	for _, c := range []struct {
		name             string
		f                Facts
		violation, unmet string
	}{
		{"nothing changed, the next reload took: held", ok(held), "", ""},
		{"the count final and not moved", with(func(f *Facts) { f.Procs = obs.Value(ProcsAfter{Failed: 0, OldListed: true, Final: true}) }),
			"a missing map file, recovery by SIGUSR2: show proc did not count the failed reload (failed: 0 -> 0, read after the master logged the failure)", ""},
		{"the failure never counted", with(func(f *Facts) { f.Procs = obs.Value(ProcsAfter{Failed: 0, OldListed: true}) }),
			"a missing map file, recovery by SIGUSR2: show proc never counted the failed reload within 15s (failed: 0 -> 0)", ""},
		{"the master blocks SIGUSR2 and the next reload never takes (a master that hangs)", with(func(f *Facts) {
			f.Signals, f.Recovered, f.RecoveryErr = obs.Value(Signals{Blocked: true}), false, "no new worker listed 20s after SIGUSR2"
		}), "a missing map file, recovery by SIGUSR2: the master blocks SIGUSR2 after the failed reload; the next reload (SIGUSR2, good config) did not take: no new worker listed 20s after SIGUSR2", ""},
		{"old worker gone, its entry unreadable with it", with(func(f *Facts) {
			f.Procs = obs.Value(ProcsAfter{Failed: 1, Counted: true})
			f.OldWorker = obs.Opt(obs.Value(obs.Exit{Process: "old worker 14"}))
			f.HTTP, f.Entry = obs.Value(0), obs.Failure[string]("show table tbl: worker 14 is gone")
		}), "a missing map file, recovery by SIGUSR2: the old worker 14 is gone after the failed reload; the old worker answered HTTP no answer after the failed reload", ""},
		{"a new worker from a config that cannot load", with(func(f *Facts) {
			f.Procs = obs.Value(ProcsAfter{Failed: 1, Counted: true, OldListed: true, NewWorker: 18})
		}),
			"a missing map file, recovery by SIGUSR2: a new worker 18 started although the config could not load", ""},
		{"SIGUSR2 left pending", with(func(f *Facts) { f.Signals = obs.Value(Signals{Pending: true}) }), "a missing map file, recovery by SIGUSR2: SIGUSR2 is left pending on the master after the failed reload", ""},
		{"the master exited", with(func(f *Facts) { f.Master = obs.Value(obs.Exit{Process: "master", Code: 1}) }),
			"a missing map file, recovery by SIGUSR2: the master exited with code 1 after the failed reload", ""},
		{"a break this build loads is no break", with(func(f *Facts) {
			f.Setup = "haproxy -c accepts the config with a missing map file on this build: it is no break here"
		}), "", "a missing map file: haproxy -c accepts the config with a missing map file on this build: it is no break here"},
	} {
		_, v, u := CycleChecks(c.f)
		if v != c.violation || u != c.unmet {
			t.Errorf("%s:\n got  %q, %q\n want %q, %q", c.name, v, u, c.violation, c.unmet)
		}
	}
}

// Harness failures, each of which today's code read as HAProxy's: through
// the one rule they are inconclusive, never a violation; a master seen
// dead explains every failed read (REPRODUCED, as on 3.4.7).
func TestHarnessFailuresDecideNothing(t *testing.T) {
	base := Facts{Break: "a syntax error", Recovery: "SIGUSR2", Bound: 20 * time.Second, Master: obs.Value(obs.Exit{}), OldPID: 9,
		Procs: obs.Value(ProcsAfter{Failed: 1, Counted: true, OldListed: true}), HTTP: obs.Value(200),
		EntryWant: "2", Entry: obs.Value("2"), Signals: obs.Value(Signals{}), Recovered: true, HTTPRecovered: obs.Opt(obs.Value(200))}
	for _, c := range []struct {
		name   string
		change func(*Facts)
		want   verdict.Verdict
	}{
		{"show proc kept failing: never counted and old worker gone are unknown", func(f *Facts) {
			f.Procs = obs.Failure[ProcsAfter]("show proc at the end of 20s: i/o timeout")
		}, verdict.Inconclusive},
		{"one slow GET is not a worker that answers no", func(f *Facts) {
			f.HTTP = obs.Failure[int]("no HTTP answer from 127.0.0.1:1 in 4 tries over 10s, and worker 9's CLI did not answer either (EOF)")
		}, verdict.Inconclusive},
		{"an unreadable table is not an absent entry", func(f *Facts) {
			f.Entry = obs.Failure[string]("show table tbl: connection reset")
		}, verdict.Inconclusive},
		{"master signals unread", func(f *Facts) { f.Signals = obs.Failure[Signals]("permission denied") }, verdict.Inconclusive},
		{"the master died: every read after it failed", func(f *Facts) {
			f.Master = obs.Value(obs.Exit{Process: "master", Code: 139, Signal: "SIGSEGV"})
			f.Procs, f.HTTP, f.Entry, f.Signals = obs.Of[ProcsAfter]{}, obs.Of[int]{}, obs.Of[string]{}, obs.Of[Signals]{}
		}, verdict.Reproduced},
	} {
		f := base
		c.change(&f)
		tr := verdict.Trial{N: 1, Evidence: &f}
		_, tr.Violation, tr.Unmet = CycleChecks(f)
		if v, _, reason := verdict.Decide(verdict.Outcome{Trials: []verdict.Trial{tr}}, "cycles"); v != c.want {
			t.Errorf("%s: %s (%s)", c.name, v, reason)
		}
	}
}

// The findings' signatures rest on the check ids: the master that exits
// and the failure never counted are each their own check, and a check
// whose facts were not seen is not listed as held.
func TestJudgeChecks(t *testing.T) {
	f := Facts{Break: "a syntax error", BreakID: "syntax-error", Recovery: "SIGUSR2", Bound: 20 * time.Second, Master: obs.Value(obs.Exit{}), OldPID: 9,
		Procs: obs.Value(ProcsAfter{Failed: 0, OldListed: true}), HTTP: obs.Value(200), EntryWant: "2", Entry: obs.Value("2"),
		Signals: obs.Value(Signals{}), Recovered: true, HTTPRecovered: obs.Opt(obs.Value(200))}
	failed := func(cs verdict.Checks) (ids []string) {
		for _, c := range cs {
			if !c.Held {
				ids = append(ids, c.ID)
			}
		}
		return ids
	}
	cs, _, _ := CycleChecks(f)
	if got := failed(cs); len(got) != 1 || got[0] != CheckCounted+".syntax-error" {
		t.Errorf("uncounted failure: failed checks %v, want [%s]", got, CheckCounted)
	}
	if len(cs) != 9 {
		t.Errorf("every check observed: %d listed, want 9: %+v", len(cs), cs)
	}
	f.Master = obs.Value(obs.Exit{Process: "master", Signal: "SIGSEGV"})
	f.Procs = obs.Failure[ProcsAfter]("show proc: the master is gone")
	cs, v, _ := CycleChecks(f)
	if got := failed(cs); len(got) != 1 || got[0] != CheckMasterSurvives+".syntax-error" || len(cs) != 1 || !strings.Contains(v, "master") {
		t.Errorf("master crash: checks %+v (violation %q), want only %s failed", cs, v, CheckMasterSurvives)
	}
	f.Master = obs.Failure[obs.Exit]("docker inspect failed")
	if cs, _, _ := CycleChecks(f); len(cs) != 0 && cs[0].ID == CheckMasterSurvives+".syntax-error" {
		t.Errorf("an unknown master state is no held check: %+v", cs)
	}
}

// The master's lines after a failed reload, as real builds print them
// (2.6.12/3.0.11's re-execution, 3.2.26's and HEAD's new worker, 3.4.7's
// own parse failure): each ends the wait for the count; the lines
// around them, and a reload that went well, do not.
func TestFailureLogged(t *testing.T) {
	for _, c := range []struct {
		logs string
		want string
	}{
		{"[WARNING]  (1) : Loading failure!\n[WARNING]  (1) : Reexecuting Master process in waitpid mode\n", "[WARNING]  (1) : Loading failure!"},
		{"[ALERT]    (25) : config : parsing [/etc/harp/haproxy.cfg:17] : error detected in frontend 'web'\n[WARNING]  (1) : Failed to load worker!\n", "[WARNING]  (1) : Failed to load worker!"},
		{"[WARNING]  (1) : Failed to load worker (25) exited with code 1 (Exit)\n", "[WARNING]  (1) : Failed to load worker (25) exited with code 1 (Exit)"},
		{"[ALERT]    (1) : config : parsing [/etc/harp/haproxy.cfg:17]: unmatched quote at position 33:\n[ALERT]    (1) : config : Fatal errors found in configuration.\n[WARNING]  (1) : config : Master failed to parse new configuration and can't start a new worker. Already running worker will be kept. Please, check global section settings and memory limits and reload haproxy.\n",
			"[WARNING]  (1) : config : Master failed to parse new configuration and can't start a new worker. Already running worker will be kept. Please, check global section settings and memory limits and reload haproxy."},
		{"[ALERT]    (1) : config : parsing [/etc/harp/haproxy.cfg:17]: unmatched quote at position 33:\n", ""},
		{"[NOTICE]   (1) : Reloading HAProxy\n[NOTICE]   (1) : New worker (30) forked\n[NOTICE]   (1) : Loading success.\n", ""},
	} {
		got, ok := FailureLogged(c.logs)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("FailureLogged(%q) = %q, %v; want %q", c.logs, got, ok, c.want)
		}
	}
}

func TestAfterReading(t *testing.T) {
	running := obs.Value(obs.Exit{})
	kept := AfterReading(obs.Value(cliout.Procs{Master: cliout.Proc{Failed: 2}, Workers: []cliout.Proc{{PID: 9}}}), 180*time.Millisecond, false, running, 1, 9)
	if a, ok := kept.Procs.Get(); !ok || !a.Counted || !a.OldListed || kept.Demoted || kept.OldGone.State != "" || kept.FailedBefore != 1 ||
		len(kept.Notes()) != 1 || kept.Notes()[0] != "show proc counted the failed reload 180ms after SIGUSR2" {
		t.Errorf("kept: %+v %q", kept, kept.Notes())
	}
	// 3.1 and later list the worker that keeps serving among the old ones;
	// the count read after the master's line is final.
	demoted := AfterReading(obs.Value(cliout.Procs{Master: cliout.Proc{Failed: 1}, OldWorkers: []cliout.Proc{{PID: 9}}}), 250*time.Millisecond, true, running, 1, 9)
	demoted.Logged = "[WARNING]  (1) : Failed to load worker!"
	if a, _ := demoted.Procs.Get(); !demoted.Demoted || demoted.OldGone.State != "" || a.Counted || !a.Final || len(demoted.Notes()) != 2 ||
		!strings.Contains(demoted.Notes()[0], "final 250ms after SIGUSR2: read after the master logged") || !strings.Contains(demoted.Notes()[1], "keeps serving, 9, among the old workers") {
		t.Errorf("demoted: %+v, notes %q", demoted, demoted.Notes())
	}
	replaced := AfterReading(obs.Value(cliout.Procs{Master: cliout.Proc{Failed: 1}, Workers: []cliout.Proc{{PID: 18}}}), 0, false, running, 1, 9)
	if e, ok := replaced.OldGone.Get(); !ok || e.Process != "old worker 9" || replaced.Demoted {
		t.Errorf("replaced: %+v", replaced)
	}
	if a, _ := replaced.Procs.Get(); a.NewWorker != 18 || a.Counted {
		t.Errorf("replaced: %+v", a)
	}
	// show proc unread: unknown, never "not counted" or "old worker gone".
	unread := AfterReading(obs.Failure[cliout.Procs]("show proc at the end of 20s: EOF"), 0, false, running, 1, 9)
	if unread.Procs.State != obs.Failed || unread.Procs.Why != "show proc at the end of 20s: EOF" || unread.OldGone.State != "" {
		t.Errorf("unread: %+v", unread)
	}
}

package history

import (
	"reflect"
	"strings"
	"testing"

	"github.com/harp-project/harp/harness/core/verdict"
	"github.com/harp-project/harp/harness/ops/findings"
	"github.com/harp-project/harp/harness/ops/report"
)

func TestPlan(t *testing.T) {
	fixes := []Fix{
		{Commit: "1111111111111111", Bad: "v3.0.0", Fixed: "v3.1.0", Parent: "1111111000000000"},
		{Commit: "2222222222222222", Bad: "v2.6.0", Fixed: "v2.7.0", Parent: "2222222000000000"},
		{Commit: "3333333333333333", Bad: "v3.0.0", Fixed: "v3.1.0"}, // a proposal only
		{Commit: "4444444444444444", Bad: "v3.0.0", Fixed: "v3.1.0"}, // retired
		{Commit: "5555555555555555", Bad: "v3.0.0", Fixed: "v3.1.0"}, // not observable
		{Commit: "6666666666666666", Bad: "v3.4.0", Fixed: ""},       // not released
		{Commit: "7777777777777777", Bad: "v3.0.0", Fixed: "v3.1.0"}, // a crash signature: no suite to run
	}
	js := map[string]Judgement{
		"1111111": {Observable: true, Catch: "upstream-fixes-cli/cli-a"},
		"2222222": {Observable: true, Catch: "upstream-fixes-cli/cli-b, conf-runtime-limits"},
		"3333333": {Observable: true, Catch: "new:cli-c"},
		"4444444": {Observable: true, Catch: "retired:cli-d (held on the bad build: x)"},
		"5555555": {Catch: "-"},
		"6666666": {Observable: true, Catch: "upstream-fixes-cli/cli-e"},
		"7777777": {Observable: true, Catch: "crash/sig"},
	}
	us := PlanReleases(fixes, js, "/src/haproxy", 2)
	want := []Unit{
		{Phase: PhaseReleases, Suite: "conf-runtime-limits", Builds: []string{"git:/src/haproxy@v2.6.0", "git:/src/haproxy@v2.7.0"}, Trial: 1, Fixes: []string{"222222222222"}},
		{Phase: PhaseReleases, Suite: "upstream-fixes-cli", Builds: []string{"git:/src/haproxy@v2.6.0", "git:/src/haproxy@v2.7.0", "git:/src/haproxy@v3.0.0", "git:/src/haproxy@v3.1.0"}, Trial: 1, Fixes: []string{"111111111111", "222222222222"}},
	}
	if len(us) != 4 || !reflect.DeepEqual(us[:2], want) || us[2].Trial != 2 || us[2].Suite != "conf-runtime-limits" {
		t.Fatalf("releases:\n%+v\nwant trial 1:\n%+v", us, want)
	}
	if us[1].Name() != "releases/upstream-fixes-cli/trial-1" {
		t.Errorf("name %q", us[1].Name())
	}
	// The releases caught 2222222 and missed 1111111: only 1111111's
	// pair is run, on its parent and itself.
	res := func(tag string, v verdict.Verdict, id string) report.Result {
		return report.Result{Suite: "upstream-fixes-cli", Verdict: v, Checks: []verdict.Tally{{ID: id, Held: map[bool]int{true: 0, false: 1}[v == verdict.Reproduced], Failed: map[bool]int{true: 1, false: 0}[v == verdict.Reproduced]}},
			Origin: "git /src/haproxy commit 0123456789abcdef (" + tag + "): x"}
	}
	runs := []findings.Scanned{{Dir: "r", Run: report.Run{Results: []report.Result{
		res("v3.0.0", verdict.Pass, "cli-a"), res("v3.1.0", verdict.Pass, "cli-a"),
		res("v2.6.0", verdict.Reproduced, "cli-b"), res("v2.7.0", verdict.Pass, "cli-b"),
		{Suite: "conf-runtime-limits", Verdict: verdict.Reproduced, Origin: "git /src/haproxy commit 0123456789abcdef (v2.6.0): x"},
		{Suite: "conf-runtime-limits", Verdict: verdict.Pass, Origin: "git /src/haproxy commit 0123456789abcdef (v2.7.0): x"},
	}}}}
	b := Make(fixes, js, runs)
	cs := PlanCommits(b, "/src/haproxy", 1)
	if len(cs) != 1 || cs[0].Suite != "upstream-fixes-cli" || !reflect.DeepEqual(cs[0].Builds, []string{"git:/src/haproxy@1111111000000000", "git:/src/haproxy@1111111111111111"}) || cs[0].Phase != PhaseCommits {
		t.Errorf("commits: %+v (board %v %v)", cs, b.Rows[0].Status, b.Rows[1].Status)
	}
}

// A check a decided result does not count was not run there: no trial,
// also where the result counts no checks at all (a harp whose judge of
// the suite named none yet). Where a trial was inconclusive it may be
// that one: an INCONCLUSIVE trial.
func TestNotRun(t *testing.T) {
	checked := []verdict.Tally{{ID: "other", Held: 1}}
	for _, c := range []struct {
		r    report.Result
		sig  string
		want bool
	}{
		{report.Result{Verdict: verdict.Pass, Checks: checked}, "s/new", true},
		{report.Result{Verdict: verdict.Reproduced, Reason: "x in 1 of 14 cases", Checks: checked}, "s/new", true},
		{report.Result{Verdict: verdict.Reproduced, Reason: "x in 1 of 14 cases; 1 cases inconclusive", Checks: checked}, "s/new", false},
		{report.Result{Verdict: verdict.Inconclusive, Checks: checked}, "s/new", false},
		{report.Result{Verdict: verdict.Pass, Checks: checked}, "s/other", false},
		{report.Result{Verdict: verdict.Pass}, "s/new", true},                                      // a harp whose judge named no checks of the suite yet
		{report.Result{Verdict: verdict.Reproduced, Reason: "x in 1 of 4 updates"}, "s/new", true}, // its whole-suite verdict is no answer of the check's
		{report.Result{Verdict: verdict.Inconclusive}, "s/new", false},
		{report.Result{Verdict: verdict.Pass, Checks: checked}, "s", false}, // a suite-level catch
		{report.Result{Verdict: verdict.Pass, Checks: checked}, "crash/x", false},
	} {
		if got := notRun(c.r, c.sig); got != c.want {
			t.Errorf("%s on %s %q: not run %v, want %v", c.sig, c.r.Verdict, c.r.Reason, got, c.want)
		}
	}
}

// A run on several builds none of whose results counts a check had no
// such check: a result of it with an inconclusive trial holds none of it.
func TestNotInRun(t *testing.T) {
	other := []verdict.Tally{{ID: "other", Held: 1}}
	inconclusive := report.Result{Suite: "s", Verdict: verdict.Reproduced, Reason: "x in 1 of 14 cases; 1 cases inconclusive", Checks: other}
	decided := report.Result{Suite: "s", Verdict: verdict.Pass, Checks: other}
	withNew := report.Result{Suite: "s", Verdict: verdict.Pass, Checks: append([]verdict.Tally{{ID: "new", Held: 1}}, other...)}
	for _, c := range []struct {
		name string
		run  report.Run
		sig  string
		want bool
	}{
		{"no build counted it", report.Run{Results: []report.Result{inconclusive, decided}}, "s/new", true},
		{"another build counted it", report.Run{Results: []report.Result{inconclusive, withNew}}, "s/new", false},
		{"one build only", report.Run{Results: []report.Result{inconclusive}}, "s/new", false},
		{"no checks named", report.Run{Results: []report.Result{{Suite: "s", Verdict: verdict.Inconclusive}, {Suite: "s", Verdict: verdict.Pass}}}, "s/new", false},
		{"a suite-level catch", report.Run{Results: []report.Result{inconclusive, decided}}, "s", false},
	} {
		if got := notInRun(c.run, "s", c.sig); got != c.want {
			t.Errorf("%s: not in run %v, want %v", c.name, got, c.want)
		}
	}
}

// A catch that names a flavour is planned on builds of that flavour, and
// its cells read only those builds' results; a plain catch reads only
// plain builds, whatever the sanitized ones said of its check.
func TestFlavoredCatch(t *testing.T) {
	fixes := []Fix{
		{Commit: "1111111111111111", Bad: "v3.2.0", Fixed: "v3.3.0", Parent: "1111111000000000"},
		{Commit: "2222222222222222", Bad: "v3.2.0", Fixed: "v3.3.0", Parent: "2222222000000000"},
	}
	js := map[string]Judgement{
		"1111111": {Observable: true, Catch: "upstream-fixes-cli/cli-a@asan"},
		"2222222": {Observable: true, Catch: "upstream-fixes-cli/cli-b"},
	}
	us := PlanReleases(fixes, js, "/h", 1)
	want := []string{"git:/h@v3.2.0", "git:/h@v3.2.0,flavor=asan", "git:/h@v3.3.0", "git:/h@v3.3.0,flavor=asan"}
	if len(us) != 1 || !reflect.DeepEqual(us[0].Builds, want) {
		t.Fatalf("releases: %+v, want builds %v", us, want)
	}
	res := func(build, tag string, v verdict.Verdict, id string) report.Result {
		return report.Result{Suite: "upstream-fixes-cli", Verdict: v, Build: build, Checks: []verdict.Tally{{ID: id, Held: map[bool]int{true: 0, false: 1}[v == verdict.Reproduced], Failed: map[bool]int{true: 1, false: 0}[v == verdict.Reproduced]}},
			Origin: "git /h commit 0123456789abcdef (" + tag + "): x"}
	}
	runs := []findings.Scanned{{Dir: "r", Run: report.Run{Results: []report.Result{
		// The plain builds hold cli-a (the overflow goes unseen), the
		// sanitized bad one aborts on it; cli-b fails on the sanitized
		// fixed build only (another bug's abort): not its cell.
		res("git:/h@v3.2.0", "v3.2.0", verdict.Pass, "cli-a"), res("git:/h@v3.3.0", "v3.3.0", verdict.Pass, "cli-a"),
		res("git:/h@v3.2.0,flavor=asan", "v3.2.0", verdict.Reproduced, "cli-a"), res("git:/h@v3.3.0,flavor=asan", "v3.3.0", verdict.Pass, "cli-a"),
		res("git:/h@v3.2.0", "v3.2.0", verdict.Reproduced, "cli-b"), res("git:/h@v3.3.0", "v3.3.0", verdict.Pass, "cli-b"),
		res("git:/h@v3.3.0,flavor=asan", "v3.3.0", verdict.Reproduced, "cli-b"),
	}}}}
	b := Make(fixes, js, runs)
	for i, want := range []Status{Caught, Caught} {
		if b.Rows[i].Status != want {
			t.Errorf("%s: %s (bad %v, fixed %v), want %s", b.Rows[i].Fix.Short(), b.Rows[i].Status, b.Rows[i].OnBad, b.Rows[i].OnFixed, want)
		}
	}
	if b.Rows[0].OnBad != "REPRODUCED" || b.Rows[1].OnFixed != "PASS" {
		t.Errorf("cells: cli-a bad %q, cli-b fixed %q", b.Rows[0].OnBad, b.Rows[1].OnFixed)
	}
}

// A bisect's answer goes on its fix's row, agreeing when it is a commit
// the fix's message names; the real bisect of 2776e775eccc's check named
// 28360dc53, the commit its message blames.
func TestBisects(t *testing.T) {
	bs, err := ReadBisects("../../../fixtures/upstream-bugs/bisects")
	if err != nil {
		t.Fatal(err)
	}
	got, ok := bs["2776e775eccc"]
	if !ok || got.First != "28360dc53f71" || got.Finding != "upstream-fixes-master/mcli-master-uptime-sane" || got.Good != "437fd289f2e3" {
		t.Fatalf("2776e775eccc's bisect: %+v", got)
	}
	b := Board{Rows: []Row{
		{Fix: Fix{Commit: "2776e775eccc0000", Names: []Named{{Commit: "28360dc53f71", After: true}}}, Status: Caught},
		{Fix: Fix{Commit: "1111111111110000", Names: []Named{{Commit: "222222222222", After: true}}}, Status: Caught},
		{Fix: Fix{Commit: "3333333333330000", Names: []Named{{Commit: "444444444444", After: false}}}, Status: Caught},
	}}
	b.WithBisects(map[string]Bisected{
		"2776e775eccc": got,
		"111111111111": {Good: "a", Bad: "b", First: "555555555555"},
	})
	if !b.Rows[0].BisectAgrees || b.Rows[1].BisectAgrees || b.Rows[2].Bisect != nil {
		t.Errorf("agreement: %v %v %v", b.Rows[0].BisectAgrees, b.Rows[1].BisectAgrees, b.Rows[2].Bisect)
	}
	if n := len(b.Bisectable()); n != 2 {
		t.Errorf("bisectable: %d, want 2 (a named commit before the first release is out of reach)", n)
	}
	if c := bisectCell(b.Rows[1]); c != "`555555555555`, no named commit (a..b)" {
		t.Errorf("cell %q", c)
	}
}

// A fix whose named commit is related, not the cause, or out of a
// bisect's reach, owes no bisect and says why.
func TestRelated(t *testing.T) {
	rel, err := ReadRelated("../../../fixtures/upstream-bugs/bisects")
	if err != nil || rel["a053512a7f48"] == "" {
		t.Fatalf("related.tsv: %v %v", rel, err)
	}
	b := Board{Rows: []Row{{Fix: Fix{Commit: "a053512a7f480000", Names: []Named{{Commit: "13fb7170b", After: true}}}, Status: Caught}}}
	b.WithRelated(rel)
	if len(b.Bisectable()) != 0 || !strings.Contains(bisectCell(b.Rows[0]), "related, not the cause") {
		t.Errorf("%+v: %q", b.Rows[0], bisectCell(b.Rows[0]))
	}
	// The cause, out of reach: the commit brought the very form the check
	// uses, so no earlier build can be the good end.
	b = Board{Rows: []Row{{Fix: Fix{Commit: "2b7f1cb2fe120000", Names: []Named{{Commit: "da554b7ef", After: true}}}, Status: Caught}}}
	b.WithRelated(rel)
	if len(b.Bisectable()) != 0 || !strings.Contains(bisectCell(b.Rows[0]), "`da554b7ef` is the cause, out of a bisect's reach: ") {
		t.Errorf("%+v: %q", b.Rows[0], bisectCell(b.Rows[0]))
	}
	if _, err := ReadRelated(t.TempDir()); err != nil {
		t.Errorf("no related.tsv: %v", err)
	}
}

// A make option is a variant as a flavour is: the plan builds it, and a
// result reads as it only when its build had that option.
func TestMakeVariant(t *testing.T) {
	base, v := splitFlavor("upstream-fixes-master/x@make=DEFINE=-DSYSTEM_MAXCONN=100000")
	if base != "upstream-fixes-master/x" || v != "make=DEFINE=-DSYSTEM_MAXCONN=100000" {
		t.Fatalf("split: %q %q", base, v)
	}
	build := flavored("git:/r@v2.7.0", v)
	if build != "git:/r@v2.7.0,make=DEFINE=-DSYSTEM_MAXCONN=100000" {
		t.Errorf("planned %q", build)
	}
	for spec, want := range map[string]variant{
		build:                                 v,
		"git:/r@v2.7.0":                       "",
		"git:/r@v2.7.0,flavor=minimal":        "",
		"git:/r@v2.7.0,flavor=asan":           "asan",
		"git:/r@v2.7.0,make=DEFINE=-DOTHER=1": "make=DEFINE=-DOTHER=1",
	} {
		if got := flavorOf(report.Result{Build: spec}); got != want {
			t.Errorf("%s reads as %q, want %q", spec, got, want)
		}
	}
	if got := flavored("git:/r@v2.7.0", "asan"); got != "git:/r@v2.7.0,flavor=asan" {
		t.Errorf("asan planned %q", got)
	}
}

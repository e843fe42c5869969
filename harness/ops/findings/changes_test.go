package findings

import (
	"strings"
	"testing"

	"github.com/harp-project/harp/harness/core/verdict"
	"github.com/harp-project/harp/harness/ops/report"
)

func TestChanges(t *testing.T) {
	shows := func(v string) report.Result {
		return result("", v, verdict.Reproduced, verdict.Tally{ID: "failed-reload-counted", Failed: 2})
	}
	clean := func(v string) report.Result {
		return result("", v, verdict.Pass, verdict.Tally{ID: "failed-reload-counted", Held: 6})
	}
	unsure := func(v string) report.Result { return result("", v, verdict.Inconclusive) }
	crashed := shows("3.4.7")
	crashed.Crashes = []verdict.Crash{{Process: "master", Signal: "SIGSEGV", Signature: "f <- g", Suite: "conf-failed-reload"}}

	got := Changes([]report.Result{clean("3.0.11"), shows("3.2.26"), shows("2.6.12")},
		[]report.Result{clean("3.0.11"), shows("3.2.26"), crashed, clean("2.6.12")})
	var lines []string
	for _, c := range got {
		lines = append(lines, c.String())
	}
	text := strings.Join(lines, "\n")
	for _, want := range []string{
		"also on " + ID("conf-failed-reload/failed-reload-counted") + " conf-failed-reload/failed-reload-counted: 3.4.7",
		"gone from " + ID("conf-failed-reload/failed-reload-counted") + " conf-failed-reload/failed-reload-counted: 2.6.12",
		"new finding " + ID("crash/master/SIGSEGV/f <- g") + " crash/master/SIGSEGV/f <- g: 3.4.7",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %q in:\n%s", want, text)
		}
	}
	if len(got) != 3 {
		t.Errorf("%d changes, want 3:\n%s", len(got), text)
	}
	// Shown before, not looked for now: said, never silently gone.
	got = Changes([]report.Result{shows("3.2.26")}, []report.Result{unsure("3.2.26")})
	if len(got) != 1 || got[0].Kind != "not observed on" {
		t.Errorf("inconclusive now: %+v", got)
	}
}

// A check recorded under the suite it was split from (report.SplitFrom)
// answers for its new suite: a bisect or history over old runs reads it,
// and a nightly after the split sees no new or gone finding.
func TestSplitSuiteKeepsItsChecks(t *testing.T) {
	as := func(suite string, v verdict.Verdict, c verdict.Tally) report.Result {
		r := result("", "2.6.12", v, c)
		r.Suite = suite
		return r
	}
	old := as("upstream-fixes", verdict.Reproduced, verdict.Tally{ID: "cli-too-many-args-refused", Failed: 1, Example: "x"})
	now := as("upstream-fixes-cli", verdict.Reproduced, verdict.Tally{ID: "cli-too-many-args-refused", Failed: 1, Example: "x"})
	if v, why := Verdict(old, "upstream-fixes-cli/cli-too-many-args-refused"); v != verdict.Reproduced {
		t.Errorf("the check before the split: %s %s", v, why)
	}
	if v, _ := Verdict(as("conf-failed-reload", verdict.Reproduced, verdict.Tally{ID: "cli-too-many-args-refused", Failed: 1}), "upstream-fixes-cli/cli-too-many-args-refused"); v != verdict.Inconclusive {
		t.Errorf("a suite it was not split from: %s", v)
	}
	if got := Changes([]report.Result{old}, []report.Result{now}); len(got) != 0 {
		t.Errorf("the same finding under its new suite: %+v", got)
	}
}

package findings

import (
	"strings"
	"testing"
	"time"

	"github.com/harp-project/harp/harness/core/verdict"
	"github.com/harp-project/harp/harness/ops/report"
)

// cliResult is a cell of the CLI cases under suite (upstream-fixes before
// the split, upstream-fixes-cli after it).
func cliResult(suite, version string, v verdict.Verdict, checks ...verdict.Tally) report.Result {
	r := result("deb:"+version, version, v, checks...)
	r.Suite, r.Title = suite, suite+"'s cases"
	return r
}

// One bug, seen by a run before the split (under upstream-fixes) and one
// after (under upstream-fixes-cli), is one finding under the new suite's
// signature, with both runs' observations: not two findings.
func TestLedgerJoinsAChecksFindingAcrossTheSplit(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	empty := verdict.Tally{ID: "cli-empty-line-ignored", Failed: 1, Example: "an empty line closed the session"}
	runs := []Scanned{
		{Dir: "before-split", Run: report.Run{Started: t0, Results: []report.Result{
			cliResult("upstream-fixes", "2.6.12-1", verdict.Reproduced, empty),
			cliResult("upstream-fixes", "3.0.11-1", verdict.Pass, verdict.Tally{ID: "cli-empty-line-ignored", Held: 1}),
		}}},
		{Dir: "after-split", Run: report.Run{Started: t0.Add(24 * time.Hour), Results: []report.Result{
			cliResult("upstream-fixes-cli", "2.8.1-1", verdict.Reproduced, empty),
			cliResult("upstream-fixes-cli", "3.2.26-1", verdict.Pass, verdict.Tally{ID: "cli-empty-line-ignored", Held: 1}),
		}}},
	}
	fs := Ledger(runs, Marks{})
	if len(fs) != 1 {
		var sigs []string
		for _, f := range fs {
			sigs = append(sigs, f.Signature)
		}
		t.Fatalf("%d findings (%s), want the one upstream-fixes-cli/cli-empty-line-ignored", len(fs), strings.Join(sigs, ", "))
	}
	f := fs[0]
	if f.Signature != "upstream-fixes-cli/cli-empty-line-ignored" || f.Suite != "upstream-fixes-cli" || f.ID != ID(f.Signature) || f.Title != "upstream-fixes-cli's cases" {
		t.Errorf("finding %s %s (suite %s, %q), want the new suite's signature, id and title", f.ID, f.Signature, f.Suite, f.Title)
	}
	if len(f.Formerly) != 1 || f.Formerly[0] != "upstream-fixes/cli-empty-line-ignored" {
		t.Errorf("formerly %v, want the old signature", f.Formerly)
	}
	// The old signature and its id, as an issue filed before the split
	// names them, still find it.
	for _, name := range []string{"upstream-fixes/cli-empty-line-ignored", ID("upstream-fixes/cli-empty-line-ignored")} {
		if g, err := Find(fs, name); err != nil || g.Signature != f.Signature {
			t.Errorf("Find(%s): %s %v", name, g.Signature, err)
		}
	}
	if got := buildNames(f.Shows); got != "2.6.12-1 2.8.1-1" {
		t.Errorf("shows %q, want both runs' builds 2.6.12-1 2.8.1-1", got)
	}
	if got := buildNames(f.Clean); got != "3.0.11-1 3.2.26-1" {
		t.Errorf("clean %q, want both runs' builds 3.0.11-1 3.2.26-1", got)
	}
	if f.FirstSeen.Run != "before-split" || f.LastSeen.Run != "after-split" {
		t.Errorf("seen %+v .. %+v, want first before the split, last after it", f.FirstSeen, f.LastSeen)
	}
	// A mark made on the old signature still holds for the finding.
	old := Ledger(runs, Marks{"upstream-fixes/cli-empty-line-ignored": {State: StateReported, Ref: "haproxy/haproxy#1"}})
	if len(old) != 1 || old[0].Status.State != StateReported {
		t.Errorf("a mark on the old signature: %+v", old)
	}
}

// A run recorded before the split only: its check is still found under the
// old signature (no later run says which area it belongs to).
func TestLedgerKeepsAnOldFindingWithoutALaterRun(t *testing.T) {
	runs := []Scanned{{Dir: "before-split", Run: report.Run{Results: []report.Result{
		cliResult("upstream-fixes", "2.6.12-1", verdict.Reproduced, verdict.Tally{ID: "cli-empty-line-ignored", Failed: 1}),
	}}}}
	if fs := Ledger(runs, Marks{}); len(fs) != 1 || fs[0].Signature != "upstream-fixes/cli-empty-line-ignored" {
		t.Errorf("%+v", fs)
	}
}

// bisect --finding checks the check id against what the runs recorded,
// before any build: an id no run of the suite recorded is an error naming
// it, with the near matches.
func TestCheckKnown(t *testing.T) {
	runs := []Scanned{{Dir: "r", Run: report.Run{Results: []report.Result{
		cliResult("upstream-fixes-cli", "3.2.26-1", verdict.Pass,
			verdict.Tally{ID: "cli-empty-line-ignored", Held: 1}, verdict.Tally{ID: "cli-too-many-args-refused", Held: 1}),
	}}}}
	old := []Scanned{{Dir: "o", Run: report.Run{Results: []report.Result{
		cliResult("upstream-fixes", "3.0.11-1", verdict.Pass, verdict.Tally{ID: "cli-empty-line-ignored", Held: 1}),
	}}}}
	for _, ok := range []struct {
		runs []Scanned
		sig  string
	}{
		{runs, "upstream-fixes-cli/cli-empty-line-ignored"},
		{old, "upstream-fixes-cli/cli-empty-line-ignored"}, // recorded before the split
		{runs, "upstream-fixes-cli"},                       // a property: no check id
		{runs, "crash/master/SIGSEGV/f <- g"},
	} {
		if err := CheckKnown(ok.runs, ok.sig); err != nil {
			t.Errorf("%s: %v", ok.sig, err)
		}
	}
	err := CheckKnown(runs, "upstream-fixes-cli/cli-empty-line-ignord")
	if err == nil || !strings.Contains(err.Error(), `"cli-empty-line-ignord"`) || !strings.Contains(err.Error(), "cli-empty-line-ignored") || strings.Contains(err.Error(), "too-many") {
		t.Errorf("a misspelt check: %v, want an error naming it and its near match alone", err)
	}
	err = CheckKnown(runs, "conf-failed-reload/master-survives")
	if err == nil || !strings.Contains(err.Error(), "master-survives") || !strings.Contains(err.Error(), "no run") {
		t.Errorf("a suite no run recorded: %v, want an error saying its checks are unknown", err)
	}
}

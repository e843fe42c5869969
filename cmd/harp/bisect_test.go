package main

import (
	"strings"
	"testing"
	"time"

	"github.com/harp-project/harp/harness/core/verdict"
	"github.com/harp-project/harp/harness/ops/report"
)

// bisect --finding with a check id no run of its suite recorded is refused
// while the flags are read, before any build, naming the id and the near
// matches (it built and ran every step, then said "not observed").
func TestBisectRefusesAnUnknownCheckBeforeBuilding(t *testing.T) {
	dir := t.TempDir()
	run := report.Run{ID: "r1", Started: time.Now(), Results: []report.Result{{Suite: "upstream-fixes-cli", Name: "3.2.26-1", Verdict: verdict.Pass,
		Checks: []verdict.Tally{{ID: "cli-empty-line-ignored", Held: 1}, {ID: "cli-too-many-args-refused", Held: 1}}}}}
	if _, err := report.Write(dir, run); err != nil {
		t.Fatal(err)
	}
	err := checkFindingCheck("upstream-fixes-cli/cli-empty-line-ignord", dir)
	if err == nil || !strings.Contains(err.Error(), `"cli-empty-line-ignord"`) || !strings.Contains(err.Error(), "near matches: cli-empty-line-ignored") {
		t.Errorf("a misspelt check: %v", err)
	}
	if err := checkFindingCheck("upstream-fixes-cli/cli-empty-line-ignored", dir); err != nil {
		t.Errorf("a recorded check: %v", err)
	}
	args := []string{"--finding", "upstream-fixes-cli/cli-empty-line-ignord", "--good", "deb:bookworm", "--bad", "deb:trixie", "--reports", dir}
	if _, code := parseBisect(args); code != 3 {
		t.Errorf("parseBisect %v: exit %d, want 3 before any build", args, code)
	}
}

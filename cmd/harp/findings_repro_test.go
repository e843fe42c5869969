package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/harp-project/harp/harness/core/verdict"
	"github.com/harp-project/harp/harness/ops/report"
	"github.com/harp-project/harp/suites/conformance/clipermissions"
	clijudge "github.com/harp-project/harp/suites/conformance/clipermissions/judge"
)

// A reports tree with one finding that has a generator (a refused `set
// table` that changed the table) and one that has none (#3517's property).
func reproReports(t *testing.T) string {
	t.Helper()
	cfg, err := clipermissions.Config()
	if err != nil {
		t.Fatal(err)
	}
	facts := clijudge.Facts{Socket: "user", Changes: []clijudge.Call{{Command: "set table tbl key harp-new data.gpc0 1", Level: "operator",
		Answer: "Permission denied", Refused: true, Changed: "[harp-key gpc0=5] -> [harp-key gpc0=5, harp-new gpc0=0]"}}}
	cs, violation, _ := clijudge.SocketChecks(facts)
	trials := []verdict.Trial{{N: 1, Checks: cs, Violation: violation, Evidence: clijudge.Evidence{Facts: facts}}}
	root := t.TempDir()
	run := report.Run{ID: "r1", Started: time.Now(), Results: []report.Result{
		{Suite: clijudge.SuiteID, Title: clipermissions.Suite.Title, Build: "deb:trixie", Name: "3.0.11-1+deb13u5", Version: "3.0.11-1+deb13u5",
			Verdict: verdict.Reproduced, Config: cfg, Trials: trials, Checks: verdict.TallyChecks(trials)},
		{Suite: "3517", Title: "tables lost", Build: "deb:trixie", Name: "3.0.11-1+deb13u5", Verdict: verdict.Reproduced, Reason: "first/marker lost", Config: "x"},
	}}
	if _, err := report.Write(root, run); err != nil {
		t.Fatal(err)
	}
	return root
}

func TestFindingsReproInput(t *testing.T) {
	root := reproReports(t)
	full := filepath.Join(t.TempDir(), "full")
	os.MkdirAll(full, 0o755)
	os.WriteFile(filepath.Join(full, "x"), []byte("x"), 0o644)
	sig := "conf-cli-permissions/user.set-table.refusal-changes-nothing"
	for _, c := range []struct {
		name string
		args []string
	}{
		{"no finding", []string{"--reports", root, "--out", t.TempDir()}},
		{"no --out", []string{sig, "--reports", root}},
		{"a non-empty --out", []string{sig, "--reports", root, "--out", full}},
		{"an unknown finding", []string{"F-0000", "--reports", root, "--out", filepath.Join(t.TempDir(), "o")}},
		{"a finding with no generator", []string{"3517", "--reports", root, "--out", filepath.Join(t.TempDir(), "o")}},
		{"no reports", []string{sig, "--reports", filepath.Join(root, "nope"), "--out", filepath.Join(t.TempDir(), "o")}},
	} {
		if code := cmdFindingsRepro(context.Background(), c.args); code != 3 {
			t.Errorf("%s: exit %d, want 3", c.name, code)
		}
	}
	if entries, _ := os.ReadDir(full); len(entries) != 1 {
		t.Errorf("a refused --out was written to: %v", entries)
	}
}

func TestFindingsReproNoVerify(t *testing.T) {
	root := reproReports(t)
	out := filepath.Join(t.TempDir(), "repro")
	if code := cmdFindingsRepro(context.Background(), []string{"conf-cli-permissions/user.set-table.refusal-changes-nothing", "--reports", root, "--out", out, "--no-verify"}); code != 0 {
		t.Fatalf("exit %d", code)
	}
	readme, err := os.ReadFile(filepath.Join(out, "README.md"))
	if err != nil || !strings.Contains(string(readme), "**Not verified**: written with `--no-verify`") {
		t.Errorf("README.md: %v\n%s", err, readme)
	}
	for _, name := range []string{"reproduce", "haproxy.cfg"} {
		if _, err := os.Stat(filepath.Join(out, name)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "verified.txt")); err == nil {
		t.Errorf("no verification, no verified.txt")
	}
}

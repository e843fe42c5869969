package main

import (
	"strings"
	"testing"

	"github.com/harp-project/harp/harness/core/verdict"
)

func TestBentAndExit(t *testing.T) {
	pass := Cell{Suite: "3517", Spec: "deb:bookworm", Truth: verdict.Pass}
	bug := Cell{Suite: "3517", Spec: "deb:experimental", Truth: verdict.Reproduced}
	runs := []Run{
		{Cell: pass, Seed: 1, Got: verdict.Pass},
		{Cell: pass, Seed: 2, Got: verdict.Inconclusive, Faults: 9},
		{Cell: bug, Seed: 1, Got: verdict.Reproduced},
		{Cell: bug, Seed: 2, Got: verdict.Error},
	}
	if ExitCode(runs) != 0 {
		t.Fatal("inconclusive and error runs bend nothing")
	}
	md := Histogram(runs, []int64{1, 2})
	if !strings.Contains(md, "| 3517 | `deb:bookworm` | PASS | 1 | 0 | 1 | 0 | 0 | 9 | 0 |") || !strings.Contains(md, "4 runs, 0 bent") {
		t.Fatal(md)
	}
	runs = append(runs, Run{Cell: pass, Seed: 3, Got: verdict.Reproduced, Reason: "reload 1: marker lost"})
	if ExitCode(runs) != 1 || !strings.Contains(Histogram(runs, nil), "- BENT: 3517 on `deb:bookworm`, seed 3: REPRODUCED (reload 1: marker lost)") {
		t.Fatal("a REPRODUCED on a build without the bug is bent")
	}
	if ExitCode([]Run{{Cell: bug, Setup: "building: no such patch"}}) != 2 || ExitCode(nil) != 2 {
		t.Fatal("a cell that could not run is no proof")
	}
}

func TestCellsNameRealSuites(t *testing.T) {
	if _, err := pick(Cells, "", false); err != nil {
		t.Fatal(err)
	}
	if cs, _ := pick(Cells, "", true); len(cs) == 0 {
		t.Fatal("no sample")
	}
	if _, err := pick(Cells, "nosuch", false); err == nil {
		t.Fatal("an unknown suite is an error")
	}
}

// Bent is judged per check: a suite verdict that is right can hide a
// check the faults bent (f084f4d compared only the suite's verdict).
func TestBentPerCheck(t *testing.T) {
	bug := Cell{Suite: "upstream-fixes-cli", Spec: "deb:bookworm", Truth: verdict.Reproduced, Fails: []string{"a", "b"}}
	fixed := Cell{Suite: "upstream-fixes-cli", Spec: "deb:experimental", Truth: verdict.Pass}
	right := Run{Cell: bug, Got: verdict.Reproduced, Checks: []verdict.Tally{{ID: "a", Failed: 1}, {ID: "c", Held: 1}}}
	if right.Bent() {
		t.Errorf("b unknown, a failed, c held: %v", right.BentChecks())
	}
	hidden := Run{Cell: bug, Got: verdict.Reproduced, Checks: []verdict.Tally{{ID: "a", Failed: 1}, {ID: "b", Held: 1}}}
	if !hidden.Bent() || ExitCode([]Run{hidden}) != 1 {
		t.Error("b held where its bug is: bent, though the suite is REPRODUCED")
	}
	wrong := Run{Cell: bug, Got: verdict.Reproduced, Checks: []verdict.Tally{{ID: "a", Failed: 1}, {ID: "c", Failed: 1, Example: "x"}}}
	if bc := wrong.BentChecks(); len(bc) != 1 || !strings.Contains(bc[0], "c failed 1 times where its fix is") {
		t.Errorf("c failed where its fix is: %v", bc)
	}
	if r := (Run{Cell: fixed, Got: verdict.Inconclusive, Checks: []verdict.Tally{{ID: "a", Failed: 1}}}); !r.Bent() {
		t.Error("a check failing on a build with its fix is bent, whatever the suite says")
	}
	md := Histogram([]Run{hidden, right}, []int64{1})
	if !strings.Contains(md, "| upstream-fixes-cli | `deb:bookworm` | b | fails | 1 | 0 | 1 |") {
		t.Error(md)
	}
}

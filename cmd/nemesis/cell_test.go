package main

import (
	"strings"
	"testing"

	"github.com/harp-project/harp/harness/verdict"
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

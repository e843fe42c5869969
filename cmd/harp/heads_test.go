package main

import (
	"strings"
	"testing"

	"github.com/harp-project/harp/harness/core/verdict"
	"github.com/harp-project/harp/harness/ops/bisect"
	"github.com/harp-project/harp/harness/ops/report"
)

// Which changes of a nightly are bisected, between which commits, by
// which oracle.
func TestRegressions(t *testing.T) {
	suites, err := selectSuites("suite:conf-cli-permissions || issue:3517")
	if err != nil || len(suites) != 2 {
		t.Fatalf("suites: %v %d", err, len(suites))
	}
	head := "git:/src/haproxy@origin/master"
	cell := func(suite, build, commit string, v verdict.Verdict, checks ...verdict.Tally) report.Result {
		return report.Result{Suite: suite, Build: build, Name: "3.5-dev" + commit[:2], Commit: commit, Verdict: v, Checks: checks}
	}
	other := verdict.Tally{ID: "user.add-map.level-enforced", Held: 3}
	newer := verdict.Tally{ID: "user.set-table.refusal-changes-nothing", Failed: 1}
	held := newer
	held.Failed, held.Held = 0, 3
	prev := []report.Result{
		cell("conf-cli-permissions", head, "aaaa1111", verdict.Pass, other, held),
		cell("3517", head, "aaaa1111", verdict.Pass),
		cell("3517", "git:/src/haproxy@origin/3.2", "cccc3333", verdict.Pass),
		{Suite: "3517", Build: "deb:3.0.11-1", Name: "3.0.11-1", Verdict: verdict.Pass},
	}
	cur := []report.Result{
		cell("conf-cli-permissions", head, "bbbb2222", verdict.Reproduced, other, newer),
		cell("3517", head, "bbbb2222", verdict.Reproduced),
		// The same commit: a verdict that moved without a code change.
		cell("3517", "git:/src/haproxy@origin/3.2", "cccc3333", verdict.Reproduced),
		{Suite: "3517", Build: "deb:3.0.11-1", Name: "3.0.11-1", Verdict: verdict.Reproduced},
	}
	run := report.Run{Results: cur, Changes: report.Compare(prev, cur)}
	gs := regressions(run, prev, suites)
	if len(gs) != 2 {
		t.Fatalf("%d regressions to bisect, want 2 (the heads that moved): %+v", len(gs), gs)
	}
	for _, g := range gs {
		if g.good != "aaaa1111" || g.bad != "bbbb2222" || g.head.Repo != "/src/haproxy" {
			t.Errorf("%s: %s..%s in %s", g.suite.ID, g.good, g.bad, g.head.Repo)
		}
	}
	if gs[0].suite.ID != "conf-cli-permissions" || gs[0].finding != "conf-cli-permissions/user.set-table.refusal-changes-nothing" {
		t.Errorf("the check that failed tonight is the oracle, not another: %q", gs[0].finding)
	}
	if gs[1].finding != "" {
		t.Errorf("a suite without checks is bisected by its verdict, got %q", gs[1].finding)
	}
	var lines []string
	for _, c := range run.Changes {
		lines = append(lines, c.String())
	}
	if s := strings.Join(lines, "\n"); !strings.Contains(s, "regressed: #3517 on "+head+": PASS -> REPRODUCED (commit aaaa1111 -> bbbb2222)") {
		t.Errorf("changes do not name the head's commits:\n%s", s)
	}
}

func TestAnswer(t *testing.T) {
	first := bisect.Candidate{Label: "0123456789ab", Subject: "BUG/MEDIUM: peers: a mutant"}
	if got := answer(bisect.Outcome{First: &first}); got != "first bad commit 0123456789ab BUG/MEDIUM: peers: a mutant" {
		t.Error(got)
	}
	left := bisect.Outcome{Suspects: []bisect.Candidate{{Label: "aaa"}, {Label: "bbb"}}}
	if got := answer(left); got != "the first bad commit is one of 2: aaa bbb" {
		t.Error(got)
	}
	if got := answer(bisect.Outcome{Unmet: "the good end reproduced"}); !strings.Contains(got, "the good end reproduced") {
		t.Error(got)
	}
}

package bugreport

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/harp-project/harp/harness/core/verdict"
	"github.com/harp-project/harp/harness/ops/bisect"
	"github.com/harp-project/harp/harness/ops/findings"
	"github.com/harp-project/harp/harness/ops/report"
)

func TestMarkdown(t *testing.T) {
	sig := "conf-failed-reload/master-survives.syntax-error"
	f := findings.Finding{ID: findings.ID(sig), Signature: sig, Kind: findings.KindCheck, Suite: "conf-failed-reload", Check: "master-survives.syntax-error",
		Example:   "the master exited on Segmentation fault after the failed reload",
		Shows:     []findings.Build{{Name: "3.4.7-1", Version: "3.4.7-1", Spec: "deb:experimental"}},
		Clean:     []findings.Build{{Name: "3.0.11-1+deb13u5", Version: "3.0.11-1+deb13u5", Spec: "deb:trixie"}},
		FirstSeen: findings.Seen{At: time.Now(), Run: "r1"}, LastSeen: findings.Seen{At: time.Now(), Run: "r1"}, Status: findings.Status{State: findings.StateNew}}
	shows := report.Result{Suite: "conf-failed-reload", Title: "A reload with a config that cannot load changes nothing", Build: "deb:experimental", Version: "3.4.7-1",
		Steps:  []string{"Setup: one node.", "Expectation, once show proc counts one more failed reload: the same worker."},
		Config: "global\n  master-worker\n", VV: "HAProxy version 3.4.7-1", Noun: "cycles",
		Crashes: []verdict.Crash{{PID: 1, Process: "master", Signal: "Segmentation fault", Signature: "conn_complete_session <- session_accept_fd", Backtrace: "Thread 1 (LWP 1):\n#0 conn_complete_session ()"}},
		Trials:  []verdict.Trial{{N: 2, Violation: "a syntax error: the master exited", Checks: verdict.Checks{{ID: "master-survives.syntax-error", Text: "x"}}, Notes: []string{"haproxy -c refuses"}}}}
	first := bisect.Candidate{Label: "abc1234", Commit: "abc1234def", Subject: "MEDIUM: mworker: something"}
	o := &bisect.Outcome{Finding: sig, Range: []bisect.Candidate{{Label: "v3.0.0"}, first, {Label: "v3.4.0"}}, First: &first,
		Steps: []bisect.Step{{Term: "good"}, {Term: "bad"}}}
	proof := report.Run{ID: "p1", Results: []report.Result{
		{Suite: "conf-failed-reload", Build: "git:/h@HEAD", Verdict: verdict.Reproduced, Checks: []verdict.Tally{{ID: "master-survives.syntax-error", Failed: 1}}},
		{Suite: "conf-failed-reload", Build: "git:/h@HEAD,patch=fix.diff", Verdict: verdict.Reproduced,
			Checks: []verdict.Tally{{ID: "master-survives.syntax-error", Held: 2}, {ID: "failed-reload-counted.syntax-error", Failed: 2}}},
		{Suite: "3517", Build: "git:/h@HEAD", Verdict: verdict.Pass},
		{Suite: "3517", Build: "git:/h@HEAD,patch=fix.diff", Verdict: verdict.Pass},
	}}
	md := Markdown(Inputs{Finding: f, Shows: shows, Repro: map[string]string{"reproduce": "#!/bin/sh\necho hi\n", "haproxy.cfg": "global\n"},
		Bisect: o, Fix: &Fix{Name: "fix.diff", Patch: "diff --git a/x b/x\n", Proof: proof}})
	for _, want := range []string{
		"### Detailed Description of the Problem", "### Expected Behavior", "### Steps to Reproduce the Behavior",
		"### Do you have any idea what may have caused this?", "### Do you have an idea how to solve the issue?",
		"### What is your configuration?", "### Output of `haproxy -vv`", "### Last Outputs and Backtraces", "### Additional Information",
		"Expectation, once show proc", "<code>reproduce</code>", "abc1234def MEDIUM: mworker: something",
		"| **finding `" + sig + "`** | **REPRODUCED** | **PASS** |",
		"The finding is REPRODUCED without the patch and PASS with it; no other suite's verdict moved.",
		"Thread 1 (LWP 1)", "HAProxy 3.0.11-1+deb13u5 (`deb:trixie`)",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("missing %q in:\n%s", want, md)
		}
	}
	// With a second patch on top in the proof runs, the pair is still the
	// build with this patch and the same build without it.
	stacked := proof
	stacked.Results = append(append([]report.Result(nil), proof.Results...),
		report.Result{Suite: "conf-failed-reload", Build: "git:/h@HEAD,patch=fix.diff,patch=/p/other.diff", Verdict: verdict.Pass,
			Checks: []verdict.Tally{{ID: "master-survives.syntax-error", Held: 2}}})
	if p := Proof(stacked, "fix.diff", sig); !strings.Contains(p, "| conf-failed-reload | REPRODUCED | REPRODUCED |") {
		t.Errorf("the stacked build was taken for the patched one:\n%s", p)
	}
	if p := Proof(stacked, "other.diff", "conf-failed-reload/failed-reload-counted.syntax-error"); !strings.Contains(p, "without the patch and `git:/h@HEAD,patch=fix.diff,patch=/p/other.diff` with it") {
		t.Errorf("the second patch's pair:\n%s", p)
	}
	// The short form keeps the finding's row and names the suites that
	// did not move in one line.
	if p := proofTable(proof, "fix.diff", sig, true); !strings.Contains(p, "The same verdict without and with it (1 suites): 3517 PASS.") || strings.Contains(p, "| 3517 |") {
		t.Errorf("short proof:\n%s", p)
	}
	// A fix whose proof moved another suite says so; one that leaves the
	// finding says NOT PROVEN.
	proof.Results[3].Verdict = verdict.Reproduced
	if p := Proof(proof, "fix.diff", sig); !strings.Contains(p, "1 other suite(s) moved") {
		t.Errorf("moved: %s", p)
	}
	proof.Results[1].Checks = []verdict.Tally{{ID: "master-survives.syntax-error", Failed: 1}}
	if p := Proof(proof, "fix.diff", sig); !strings.Contains(p, "NOT PROVEN") {
		t.Errorf("not proven: %s", p)
	}
	// Whatever the evidence, the report fits a GitHub issue.
	shows.Config = strings.Repeat("x\n", 100000)
	shows.Crashes[0].Backtrace = strings.Repeat("#1 f ()\n", 100000)
	if md := Markdown(Inputs{Finding: f, Shows: shows}); len(md) > MaxLen {
		t.Errorf("%d characters, want at most %d", len(md), MaxLen)
	}

	// The short form (with the finding's reg-test): the reg-test first,
	// the rest folded and cut, at most MaxLines lines whatever the
	// evidence, and every code block closed.
	vtc := "varnishtest \"mworker: a master in recovery mode serves its CLI\"\n#REGTEST_TYPE=bug\nhaproxy h1 -W -S -conf {\n} -start\n"
	shows.Steps = append(shows.Steps, strings.Repeat("A long step. ", 200))
	shows.VV = strings.Repeat("Feature line\n", 400)
	shows.Trials[0].Notes = []string{strings.Repeat("note\n", 500)}
	long := Inputs{Finding: f, Shows: shows, Repro: map[string]string{"reproduce": strings.Repeat("sh\n", 360)}, Bisect: o,
		Fix: &Fix{Name: "fix.diff", Patch: strings.Repeat("+line\n", 300), Proof: proof}, RegTest: &RegTest{Name: "mcli_recovery_mode_cli.vtc", Text: vtc}}
	md = Markdown(long)
	if n := strings.Count(md, "\n"); n > MaxLines {
		t.Errorf("short form: %d lines, want at most %d", n, MaxLines)
	}
	steps := strings.Index(md, "### Steps to Reproduce")
	if i := strings.Index(md, "varnishtest \"mworker"); i < steps || i > strings.Index(md, "<details><summary>The steps harp ran") {
		t.Errorf("the reg-test does not open the steps:\n%s", md)
	}
	if strings.Count(md, "```")%2 != 0 || strings.Count(md, "<details>") != strings.Count(md, "</details>") {
		t.Errorf("an open block:\n%s", md)
	}
	for _, want := range []string{"vtest -t 10 mcli_recovery_mode_cli.vtc", "harp findings repro " + f.ID, "more lines in harp's evidence", "abc1234def"} {
		if !strings.Contains(md, want) {
			t.Errorf("short form lacks %q:\n%s", want, md)
		}
	}
	// Evidence too long even folded: cut at MaxLines, blocks still closed.
	for i := 0; i < 300; i++ {
		long.Shows.Steps = append(long.Shows.Steps, "one more step")
	}
	md = Markdown(long)
	if n := strings.Count(md, "\n"); n > MaxLines || !strings.Contains(md, "(cut here") {
		t.Errorf("cut: %d lines", n)
	}
	if strings.Count(md, "```")%2 != 0 || strings.Count(md, "<details>") != strings.Count(md, "</details>") {
		t.Errorf("the cut left a block open:\n%s", md)
	}
}

// The short form lists a few of a bisect's suspects and counts the rest.
func TestShortSuspects(t *testing.T) {
	o := &bisect.Outcome{Finding: "s/c"}
	for i := 0; i < 46; i++ {
		o.Suspects = append(o.Suspects, bisect.Candidate{Label: fmt.Sprintf("c%02d", i), Subject: "MINOR: x"})
	}
	short := cause(Inputs{Bisect: o, RegTest: &RegTest{Name: "t.vtc"}})
	if !strings.Contains(short, "narrowed it to 46 commits") || !strings.Contains(short, "... and 42 more") || strings.Contains(short, "c04 ") {
		t.Errorf("short:\n%s", short)
	}
	if long := cause(Inputs{Bisect: o}); !strings.Contains(long, "c45 MINOR: x") {
		t.Errorf("long:\n%s", long)
	}
}

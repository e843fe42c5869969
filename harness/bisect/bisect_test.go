package bisect

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/harp-project/harp/harness/report"
	"github.com/harp-project/harp/harness/verdict"
)

// line makes n candidates c0..c(n-1).
func line(n int) []Candidate {
	var cs []Candidate
	for i := range n {
		cs = append(cs, Candidate{Label: fmt.Sprintf("c%d", i)})
	}
	return cs
}

// fake answers from a table of verdicts by label, several per label for
// retries, and counts the runs.
type fake struct {
	answers map[string][]verdict.Verdict
	runs    map[string]int
}

func (f *fake) oracle(_ context.Context, c Candidate) report.Result {
	if f.runs == nil {
		f.runs = map[string]int{}
	}
	as := f.answers[c.Label]
	v := as[min(f.runs[c.Label], len(as)-1)]
	f.runs[c.Label]++
	return report.Result{Verdict: v, TrialsRun: 3}
}

// regression: c0..c(k-1) pass, ck.. reproduce.
func regression(n, k int) *fake {
	f := &fake{answers: map[string][]verdict.Verdict{}}
	for i := range n {
		v := verdict.Pass
		if i >= k {
			v = verdict.Reproduced
		}
		f.answers[fmt.Sprintf("c%d", i)] = []verdict.Verdict{v}
	}
	return f
}

func TestFindsFirstBadAtEveryPosition(t *testing.T) {
	for n := 2; n <= 17; n++ {
		for k := 1; k < n; k++ {
			f := regression(n, k)
			out := Run(context.Background(), line(n), f.oracle, Options{})
			if out.First == nil || out.First.Label != fmt.Sprintf("c%d", k) {
				t.Fatalf("n=%d k=%d: first = %v (%s)", n, k, out.First, out.Unmet)
			}
			// Both ends plus a binary search: at most 2 + ceil(log2(n-1)) steps.
			limit := 2
			for m := 1; m < n-1; m *= 2 {
				limit++
			}
			if len(out.Steps) > limit {
				t.Errorf("n=%d k=%d: %d steps, want <= %d", n, k, len(out.Steps), limit)
			}
		}
	}
}

func TestFindFixLooksForFirstPass(t *testing.T) {
	f := &fake{answers: map[string][]verdict.Verdict{}}
	for i := range 8 {
		v := verdict.Reproduced
		if i >= 5 {
			v = verdict.Pass
		}
		f.answers[fmt.Sprintf("c%d", i)] = []verdict.Verdict{v}
	}
	out := Run(context.Background(), line(8), f.oracle, Options{FindFix: true})
	if out.First == nil || out.First.Label != "c5" {
		t.Fatalf("first = %v (%s)", out.First, out.Unmet)
	}
	if out.Steps[0].Term != "bad" || out.Steps[1].Term != "good" {
		t.Errorf("terms of the ends: %s %s, want bad good", out.Steps[0].Term, out.Steps[1].Term)
	}
	if md := out.Markdown("3517", "t"); !strings.Contains(md, "first good build") || !strings.Contains(md, "`c5`") {
		t.Errorf("markdown:\n%s", md)
	}
}

func TestUnbuildableStepsAreSkipped(t *testing.T) {
	f := regression(8, 5)
	f.answers["c3"] = []verdict.Verdict{verdict.Error} // middle of 0..7 is 3
	out := Run(context.Background(), line(8), f.oracle, Options{Retries: 2})
	if out.First == nil || out.First.Label != "c5" {
		t.Fatalf("first = %v (%s)", out.First, out.Unmet)
	}
	if f.runs["c3"] != 1 {
		t.Errorf("an unbuildable commit ran %d times, want 1 (never retried)", f.runs["c3"])
	}
	var skipped bool
	for _, s := range out.Steps {
		skipped = skipped || (s.Candidate.Label == "c3" && s.Term == "skip")
	}
	if !skipped {
		t.Errorf("c3 not logged as skipped: %+v", out.Steps)
	}
}

func TestInconclusiveIsRetriedThenSkipped(t *testing.T) {
	f := regression(8, 5)
	f.answers["c3"] = []verdict.Verdict{verdict.Inconclusive, verdict.Pass}
	out := Run(context.Background(), line(8), f.oracle, Options{Retries: 1})
	if f.runs["c3"] != 2 || out.First == nil || out.First.Label != "c5" {
		t.Fatalf("runs of c3 = %d, first = %v", f.runs["c3"], out.First)
	}

	f = regression(8, 5)
	f.answers["c3"] = []verdict.Verdict{verdict.Inconclusive}
	out = Run(context.Background(), line(8), f.oracle, Options{Retries: 2})
	if f.runs["c3"] != 3 {
		t.Errorf("an always inconclusive step ran %d times, want 1 + 2 retries", f.runs["c3"])
	}
	if out.First == nil || out.First.Label != "c5" {
		t.Errorf("first = %v (%s)", out.First, out.Unmet)
	}
}

func TestSkipsHidingTheBoundaryGiveSuspects(t *testing.T) {
	f := regression(4, 2)
	f.answers["c1"] = []verdict.Verdict{verdict.Error}
	f.answers["c2"] = []verdict.Verdict{verdict.Error}
	out := Run(context.Background(), line(4), f.oracle, Options{})
	if out.First != nil || len(out.Suspects) != 3 || out.Verdict() != verdict.Inconclusive {
		t.Fatalf("first %v suspects %v", out.First, out.Suspects)
	}
	if !strings.Contains(out.Unmet, "could not be tested") {
		t.Errorf("unmet = %q", out.Unmet)
	}
}

func TestEndsAreChecked(t *testing.T) {
	f := regression(6, 3)
	f.answers["c0"] = []verdict.Verdict{verdict.Reproduced}
	out := Run(context.Background(), line(6), f.oracle, Options{})
	if out.First != nil || !strings.Contains(out.Unmet, "good end c0 is not good") {
		t.Fatalf("first %v unmet %q", out.First, out.Unmet)
	}
	f = regression(6, 3)
	f.answers["c5"] = []verdict.Verdict{verdict.Pass}
	out = Run(context.Background(), line(6), f.oracle, Options{})
	if out.First != nil || !strings.Contains(out.Unmet, "bad end c5 is not bad") {
		t.Fatalf("first %v unmet %q", out.First, out.Unmet)
	}
}

package bisect

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/harp-project/harp/harness/core/verdict"
	"github.com/harp-project/harp/harness/ops/report"
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
	reasons map[string][]string // per run, the last one repeated
	weak    map[string]string
	lasting map[string]bool
}

func (f *fake) oracle(_ context.Context, c Candidate) report.Result {
	if f.runs == nil {
		f.runs = map[string]int{}
	}
	as := f.answers[c.Label]
	n := f.runs[c.Label]
	v := as[min(n, len(as)-1)]
	f.runs[c.Label]++
	r := report.Result{Verdict: v, TrialsRun: 3, Weak: f.weak[c.Label], Lasting: f.lasting[c.Label]}
	if rs := f.reasons[c.Label]; len(rs) > 0 {
		r.Reason = rs[min(n, len(rs)-1)]
	}
	return r
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

	// Retried while the reason changes, up to the retries allowed.
	f = regression(8, 5)
	f.answers["c3"] = []verdict.Verdict{verdict.Inconclusive}
	f.reasons = map[string][]string{"c3": {"reload 1: no new worker", "reload 1: show peers kept failing", "reload 2: no new worker"}}
	out = Run(context.Background(), line(8), f.oracle, Options{Retries: 2})
	if f.runs["c3"] != 3 {
		t.Errorf("an inconclusive step with changing reasons ran %d times, want 1 + 2 retries", f.runs["c3"])
	}
	if out.First == nil || out.First.Label != "c5" {
		t.Errorf("first = %v (%s)", out.First, out.Unmet)
	}
}

func TestTheSameReasonAgainIsNotRetried(t *testing.T) {
	f := regression(8, 5)
	f.answers["c3"] = []verdict.Verdict{verdict.Inconclusive}
	f.reasons = map[string][]string{"c3": {"reload 1: resync never finished (flags=0x104c after 20s)", "reload 2: resync never finished (flags=0x104c after 21s)", "x"}}
	Run(context.Background(), line(8), f.oracle, Options{Retries: 5})
	if f.runs["c3"] != 2 {
		t.Errorf("ran %d times, want 2: the second run gave the first one's reason", f.runs["c3"])
	}
}

func TestALastingReasonIsNeverRetried(t *testing.T) {
	f := regression(8, 5)
	f.answers["c3"] = []verdict.Verdict{verdict.Inconclusive, verdict.Pass}
	f.lasting = map[string]bool{"c3": true}
	out := Run(context.Background(), line(8), f.oracle, Options{Retries: 3})
	if f.runs["c3"] != 1 || out.First == nil || out.First.Label != "c5" {
		t.Errorf("runs of c3 = %d (want 1), first = %v", f.runs["c3"], out.First)
	}
}

func TestWeakObservationsNarrowButNeverAnswer(t *testing.T) {
	// c5, the first bad build, is inconclusive but still shows the bug's
	// signature: the search narrows to it, runs it again on verdicts alone,
	// and (still inconclusive) answers with the range, saying what c5 showed.
	f := regression(8, 5)
	f.answers["c5"] = []verdict.Verdict{verdict.Inconclusive}
	f.lasting = map[string]bool{"c5": true}
	f.weak = map[string]string{"c5": "first/marker held and second/marker lost"}
	out := Run(context.Background(), line(8), f.oracle, Options{Retries: 1})
	if out.First != nil || len(out.Suspects) != 2 || out.Suspects[0].Label != "c5" || out.Suspects[1].Label != "c6" || out.Verdict() != verdict.Inconclusive {
		t.Fatalf("first %v suspects %v (%s)", out.First, out.Suspects, out.Unmet)
	}
	var weak Step
	for _, st := range out.Steps {
		if st.Candidate.Label == "c5" && st.Weak != "" {
			weak = st
		}
	}
	if weak.Term != "bad (weak)" || weak.Verdict != verdict.Inconclusive {
		t.Errorf("c5's step: %+v", weak)
	}
	if f.runs["c5"] != 2 {
		t.Errorf("c5 ran %d times, want 2 (weak, then on verdicts alone)", f.runs["c5"])
	}
	if md := out.Markdown("3517", "t"); !strings.Contains(md, "weak observation") {
		t.Errorf("the answer does not say what the weak observation was:\n%s", md)
	}
	// Strict: the same, without the weak step.
	f.runs = nil
	out = Run(context.Background(), line(8), f.oracle, Options{Retries: 1, Strict: true})
	if out.First != nil || len(out.Suspects) != 2 || out.Suspects[0].Label != "c5" || out.Suspects[1].Label != "c6" {
		t.Errorf("strict: first %v suspects %v (%s)", out.First, out.Suspects, out.Unmet)
	}
}

// A weak step confirmed by a verdict on its rerun gives the answer.
func TestAWeakEdgeConfirmedByAVerdictAnswers(t *testing.T) {
	f := regression(8, 5)
	f.answers["c5"] = []verdict.Verdict{verdict.Inconclusive, verdict.Reproduced}
	f.weak = map[string]string{"c5": "second/marker lost"}
	out := Run(context.Background(), line(8), f.oracle, Options{Retries: 0})
	if out.First == nil || out.First.Label != "c5" || out.Verdict() != verdict.Pass {
		t.Fatalf("first %v (%s)", out.First, out.Unmet)
	}
}

// Issue #23: a regression at c8 behind a stuck stretch c3-c5 whose
// inconclusive runs carry weak observations answered c3 and exited 0. The
// weak edge is run again, skipped, and the search goes on to c8.
func TestAWeakStretchDoesNotHideTheRegression(t *testing.T) {
	f := stretch(10, 8, 3, 5)
	f.weak = map[string]string{"c3": "a marker lost", "c4": "a marker lost", "c5": "a marker lost"}
	out := Run(context.Background(), line(10), f.oracle, Options{Retries: 1})
	if out.First == nil || out.First.Label != "c8" {
		t.Fatalf("first %v suspects %v (%s)", out.First, out.Suspects, out.Unmet)
	}
	if out.Verdict() != verdict.Pass {
		t.Fatal(out.Verdict())
	}
}

// stretch: a regression at k with the builds in [a, b] inconclusive (a
// resync that never finishes).
func stretch(n, k, a, b int) *fake {
	f := regression(n, k)
	f.lasting = map[string]bool{}
	for i := a; i <= b; i++ {
		l := fmt.Sprintf("c%d", i)
		f.answers[l] = []verdict.Verdict{verdict.Inconclusive}
		f.lasting[l] = true
	}
	return f
}

func TestAStretchOfSkipsIsMappedQuickly(t *testing.T) {
	// The shape of v2.9.0..v3.0.0 for #3517: 1108 commits, a stretch that
	// cannot be tested, the first bad commit just past it.
	const n, a, b = 1108, 600, 640
	f := stretch(n, b+1, a, b)
	var progress []string
	out := Run(context.Background(), line(n), f.oracle, Options{Retries: 1, OnStep: func(o Outcome) { progress = append(progress, o.Progress) }})
	if out.First != nil || out.LastOld == nil || out.LastOld.Label != fmt.Sprintf("c%d", a-1) || out.FirstNew.Label != fmt.Sprintf("c%d", b+1) {
		t.Fatalf("first %v, edges %v %v (%s)", out.First, out.LastOld, out.FirstNew, out.Unmet)
	}
	if len(out.Suspects) != b-a+2 || !strings.Contains(out.Unmet, fmt.Sprintf("the first bad build is one of these %d", b-a+2)) {
		t.Errorf("suspects %d: %s", len(out.Suspects), out.Unmet)
	}
	skips := 0
	for _, st := range out.Steps {
		if st.Term == "skip" {
			skips++
		}
	}
	// The old policy walked the stretch commit by commit (41 skips); the
	// edges of a stretch of 41 take a few probes each way.
	if len(out.Steps) > 20 || skips > 8 {
		t.Errorf("%d steps, %d skipped: want at most 20 and 8", len(out.Steps), skips)
	}
	if len(progress) != len(out.Steps)-2 || !strings.Contains(progress[0], "more steps") {
		t.Errorf("progress after every step: %d for %d steps, first %q", len(progress), len(out.Steps), progress[0])
	}
	t.Logf("%d steps, %d skipped: %s", len(out.Steps), skips, out.Unmet)
}

func TestABoundaryOutsideTheStretchIsFoundExactly(t *testing.T) {
	// (A first bad build inside the stretch, or just past it, is answered
	// as a range: see the exhaustive test.)
	for _, k := range []int{100, 549, 643, 700, 1000} {
		f := stretch(1108, k, 550, 641)
		out := Run(context.Background(), line(1108), f.oracle, Options{Retries: 1})
		if out.First == nil || out.First.Label != fmt.Sprintf("c%d", k) {
			t.Errorf("k=%d: first %v (%s)", k, out.First, out.Unmet)
		}
		if len(out.Steps) > 30 {
			t.Errorf("k=%d: %d steps", k, len(out.Steps))
		}
	}
}

func TestEveryStretchAndBoundaryGivesATrueAnswer(t *testing.T) {
	// Exhaustive on a small range: the answer always holds the first bad
	// build, and is exact when that build and the one before were tested.
	const n = 24
	for a := 1; a < n-1; a++ {
		for b := a; b < n-1; b++ {
			for k := 1; k < n; k++ {
				f := stretch(n, k, a, b)
				out := Run(context.Background(), line(n), f.oracle, Options{Retries: 1})
				want := fmt.Sprintf("c%d", k)
				switch {
				case out.First != nil:
					if out.First.Label != want {
						t.Fatalf("a=%d b=%d k=%d: first %s, want %s", a, b, k, out.First.Label, want)
					}
				default:
					found := false
					for _, c := range out.Suspects {
						found = found || c.Label == want
					}
					if !found || (k < a || k > b+1) {
						t.Fatalf("a=%d b=%d k=%d: suspects %v (%s)", a, b, k, out.Suspects, out.Unmet)
					}
				}
			}
		}
	}
}

func TestADeadlineAnswersWithTheRangeLeft(t *testing.T) {
	f := regression(64, 40)
	out := Run(context.Background(), line(64), f.oracle, Options{Deadline: time.Now().Add(-time.Second)})
	if out.First != nil || len(out.Suspects) != 63 || !strings.Contains(out.Unmet, "the time given ran out") {
		t.Errorf("first %v suspects %d (%s)", out.First, len(out.Suspects), out.Unmet)
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

// The e2e bisect's history (cmd/harp's stretch test): c2 stuck, c3 stuck
// with the bug's signature, c4 and c5 bad.
func TestTheE2EStretchHistory(t *testing.T) {
	f := regression(6, 3)
	f.answers["c2"], f.answers["c3"] = []verdict.Verdict{verdict.Inconclusive}, []verdict.Verdict{verdict.Inconclusive}
	f.lasting = map[string]bool{"c2": true, "c3": true}
	f.weak = map[string]string{"c3": "first/marker held and second/marker lost"}
	out := Run(context.Background(), line(6), f.oracle, Options{Retries: 1})
	md := out.Markdown("3517", "t")
	if len(out.Suspects) != 3 || out.Suspects[2].Label != "c4" || !strings.Contains(md, "Cost: 7 runs (2 bad, 1 bad (weak), 2 good, 2 skip)") {
		t.Fatalf("suspects %v\n%s", out.Suspects, md)
	}
}

// Package bisect finds where a suite's verdict changes along an ordered
// list of builds (Debian versions, or commits of a git repository), with
// the suite as the oracle: the first build that reproduces an issue (a
// regression), or with FindFix the first that passes (a fix).
package bisect

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/harp-project/harp/harness/report"
	"github.com/harp-project/harp/harness/spec"
	"github.com/harp-project/harp/harness/verdict"
)

// Candidate is one build along the range, oldest first.
type Candidate struct {
	Spec    spec.Spec `json:"-"`
	SpecRaw string    `json:"spec"`
	Label   string    `json:"label"`             // a Debian version, or a short commit id
	Commit  string    `json:"commit,omitempty"`  // full commit id (git ranges)
	Subject string    `json:"subject,omitempty"` // commit subject (git ranges)
}

func (c Candidate) String() string {
	if c.Subject != "" {
		return c.Label + " " + c.Subject
	}
	return c.Label
}

// Class is what a step's verdict means for the search.
type Class string

const (
	Old  Class = "old"  // like the start of the range (good, or bad with FindFix)
	New  Class = "new"  // like the end of the range
	Skip Class = "skip" // unbuildable, or inconclusive after every retry
)

// Step is one run of the suite on one candidate.
type Step struct {
	Candidate Candidate       `json:"candidate"`
	Attempt   int             `json:"attempt"`
	Verdict   verdict.Verdict `json:"verdict"`
	Violated  int             `json:"trials_violated"`
	Trials    int             `json:"trials_run"`
	Reason    string          `json:"reason"`
	Duration  time.Duration   `json:"duration_ns"`
	Class     Class           `json:"class"`
	// Term is how a user names the class: good, bad or skip.
	Term string `json:"term"`
}

// Oracle runs the suite on a candidate.
type Oracle func(ctx context.Context, c Candidate) report.Result

// Options set the search's policy.
type Options struct {
	FindFix bool // look for the first passing build instead of the first reproducing one
	// Retries is how many more times an INCONCLUSIVE step is run before the
	// candidate is skipped.
	Retries int
	Logf    func(format string, args ...any)
}

// Outcome is what a bisection found.
type Outcome struct {
	FindFix bool        `json:"find_fix"`
	Range   []Candidate `json:"range"`
	Steps   []Step      `json:"steps"`
	// First is the first build of the new kind; nil when the search could not
	// say (see Unmet, or Suspects when skipped builds hide the boundary).
	First    *Candidate  `json:"first,omitempty"`
	Suspects []Candidate `json:"suspects,omitempty"`
	Unmet    string      `json:"unmet,omitempty"`
}

// Verdict sums the outcome up: a boundary found is PASS (the search
// worked), anything else INCONCLUSIVE.
func (o Outcome) Verdict() verdict.Verdict {
	if o.First != nil {
		return verdict.Pass
	}
	return verdict.Inconclusive
}

// terms gives the user's words for old and new.
func (o Options) terms() (old, new string) {
	if o.FindFix {
		return "bad", "good"
	}
	return "good", "bad"
}

// classify maps a verdict to old/new/"" (retry) or skip.
func (o Options) classify(v verdict.Verdict) Class {
	switch v {
	case verdict.Pass:
		if o.FindFix {
			return New
		}
		return Old
	case verdict.Reproduced:
		if o.FindFix {
			return Old
		}
		return New
	case verdict.Error:
		return Skip // a build that cannot be made: as git bisect skip
	}
	return "" // inconclusive: run again
}

// Run bisects cands (oldest first; the first and last are the range's
// ends, both checked before the search).
func Run(ctx context.Context, cands []Candidate, oracle Oracle, o Options) Outcome {
	out := Outcome{FindFix: o.FindFix, Range: cands}
	logf := o.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	oldT, newT := o.terms()
	if len(cands) < 2 {
		out.Unmet = "the range holds fewer than two builds"
		return out
	}
	// test runs one candidate, retrying inconclusive runs.
	test := func(i int) Class {
		c := cands[i]
		for attempt := 1; attempt <= 1+max(o.Retries, 0); attempt++ {
			if ctx.Err() != nil {
				return Skip
			}
			t0 := time.Now()
			r := oracle(ctx, c)
			class := o.classify(r.Verdict)
			st := Step{Candidate: c, Attempt: attempt, Verdict: r.Verdict, Violated: r.TrialsViolated, Trials: r.TrialsRun,
				Reason: r.Reason, Duration: time.Since(t0), Class: class}
			last := attempt == 1+max(o.Retries, 0)
			if class == "" && last {
				st.Class = Skip
			}
			switch st.Class {
			case Old:
				st.Term = oldT
			case New:
				st.Term = newT
			case Skip:
				st.Term = "skip"
			default:
				st.Term = "retry"
			}
			out.Steps = append(out.Steps, st)
			logf("bisect: %s: %s (%s) -> %s", c, r.Verdict, r.Reason, st.Term)
			if st.Class != "" {
				return st.Class
			}
		}
		return Skip
	}
	lo, hi := 0, len(cands)-1
	interrupted := func() bool {
		if ctx.Err() != nil {
			out.Unmet = "interrupted: " + ctx.Err().Error()
			return true
		}
		return false
	}
	if c := test(lo); c != Old {
		if interrupted() {
			return out
		}
		out.Unmet = fmt.Sprintf("the %s end %s is not %s: %s", oldT, cands[lo], oldT, lastReason(out))
		return out
	}
	if c := test(hi); c != New {
		if interrupted() {
			return out
		}
		out.Unmet = fmt.Sprintf("the %s end %s is not %s: %s", newT, cands[hi], newT, lastReason(out))
		return out
	}
	skipped := map[int]bool{}
	for hi-lo > 1 {
		mid := pick(lo, hi, skipped)
		if mid < 0 {
			break // every build between the ends was skipped
		}
		switch test(mid) {
		case Old:
			lo = mid
		case New:
			hi = mid
		default:
			skipped[mid] = true
		}
		if ctx.Err() != nil {
			out.Unmet = "interrupted: " + ctx.Err().Error()
			return out
		}
	}
	if hi-lo == 1 {
		first := cands[hi]
		out.First = &first
		return out
	}
	out.Suspects = append([]Candidate(nil), cands[lo+1:hi+1]...)
	out.Unmet = fmt.Sprintf("%d build(s) between %s and %s could not be tested; the first %s build is one of them or %s", hi-lo-1, cands[lo].Label, cands[hi].Label, newT, cands[hi].Label)
	return out
}

// pick chooses the untested candidate strictly between lo and hi nearest
// the middle, or -1.
func pick(lo, hi int, skipped map[int]bool) int {
	mid := (lo + hi) / 2
	for d := 0; d < hi-lo; d++ {
		for _, i := range []int{mid - d, mid + d} {
			if i > lo && i < hi && !skipped[i] {
				return i
			}
		}
	}
	return -1
}

func lastReason(o Outcome) string {
	s := o.Steps[len(o.Steps)-1]
	return fmt.Sprintf("%s (%s)", s.Verdict, s.Reason)
}

// Markdown renders the outcome: the answer, then every step, ready for
// the upstream issue.
func (o Outcome) Markdown(suite, title string) string {
	var b strings.Builder
	kind := "first bad build (the issue reproduces from here on)"
	if o.FindFix {
		kind = "first good build (the issue is fixed from here on)"
	}
	fmt.Fprintf(&b, "### harp bisect: #%s %s\n\n", suite, title)
	if len(o.Range) > 0 {
		fmt.Fprintf(&b, "Range: %s .. %s (%d builds).\n\n", o.Range[0].Label, o.Range[len(o.Range)-1].Label, len(o.Range))
	}
	switch {
	case o.First != nil:
		fmt.Fprintf(&b, "**%s**: `%s`", kind, o.First.Label)
		if o.First.Subject != "" {
			fmt.Fprintf(&b, " %s", o.First.Subject)
		}
		if o.First.Commit != "" {
			fmt.Fprintf(&b, " (commit %s)", o.First.Commit)
		}
		b.WriteString("\n\n")
	default:
		fmt.Fprintf(&b, "**No answer**: %s\n\n", o.Unmet)
		for _, s := range o.Suspects {
			fmt.Fprintf(&b, "- suspect: `%s`\n", s)
		}
		if len(o.Suspects) > 0 {
			b.WriteString("\n")
		}
	}
	b.WriteString("| # | build | verdict | trials | term | duration | reason |\n|---|---|---|---|---|---|---|\n")
	for i, s := range o.Steps {
		fmt.Fprintf(&b, "| %d | `%s` | %s | %d/%d | %s | %.1f s | %s |\n", i+1, strings.ReplaceAll(s.Candidate.String(), "|", "\\|"), s.Verdict, s.Violated, s.Trials, s.Term,
			s.Duration.Seconds(), strings.ReplaceAll(firstLine(s.Reason), "|", "\\|"))
	}
	return b.String()
}

func firstLine(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	return first
}

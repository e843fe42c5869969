// Package bisect finds where a suite's verdict changes along an ordered
// list of builds (Debian versions, or commits of a git repository), with
// the suite as the oracle: the first build that reproduces an issue (a
// regression), or with FindFix the first that passes (a fix).
package bisect

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/harp-project/harp/harness/core/spec"
	"github.com/harp-project/harp/harness/core/verdict"
	"github.com/harp-project/harp/harness/ops/report"
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
	Duration  time.Duration   `json:"duration_ns"` // building it and running the suite
	Suite     time.Duration   `json:"suite_ns"`    // running the suite
	Class     Class           `json:"class"`
	// Term is how a user names the class: good, bad or skip.
	Term string `json:"term"`
	// Weak: the class rests on a weak observation of an INCONCLUSIVE run
	// (report.Result.Weak), not on a verdict.
	Weak string `json:"weak_observation,omitempty"`
	// Lasting: the run was inconclusive for a reason a rerun cannot change.
	Lasting bool `json:"unmet_lasting,omitempty"`
}

// Oracle runs the suite on a candidate.
type Oracle func(ctx context.Context, c Candidate) report.Result

// Options set the search's policy.
type Options struct {
	FindFix bool // look for the first passing build instead of the first reproducing one
	// Retries is how many more times an INCONCLUSIVE step may be run
	// before the candidate is skipped: only while its reason may be
	// transient (not lasting, not the same reason again).
	Retries int
	// Strict ignores weak observations: only verdicts classify a step.
	Strict bool
	// Deadline, when set, ends the search with the range left as the
	// answer ("the first bad is one of these N").
	Deadline time.Time
	Logf     func(format string, args ...any)
	// OnStep gets the outcome so far after every step (bisect.md as it goes).
	OnStep func(Outcome)
}

// Outcome is what a bisection found.
type Outcome struct {
	FindFix bool `json:"find_fix"`
	// Finding is the signature whose own check was the oracle (harp
	// bisect --finding); "" when the suite's verdict was.
	Finding string      `json:"finding,omitempty"`
	Range   []Candidate `json:"range"`
	Steps   []Step      `json:"steps"`
	// First is the first build of the new kind; nil when the search could not
	// say (see Unmet, or Suspects when skipped builds hide the boundary).
	First *Candidate `json:"first,omitempty"`
	// Suspects hold the first build of the new kind when the search could
	// narrow it no further: every build after LastOld up to FirstNew, the
	// latter included.
	Suspects []Candidate `json:"suspects,omitempty"`
	// LastOld and FirstNew are the tested edges around the answer.
	LastOld  *Candidate `json:"last_old,omitempty"`
	FirstNew *Candidate `json:"first_new,omitempty"`
	Unmet    string     `json:"unmet,omitempty"`
	// Progress is set while the search runs: what is left.
	Progress string `json:"progress,omitempty"`
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

// sameReason compares two runs' reasons with their counts and times
// left out: "reload 1: ... flags=0x104c after 20s" twice is one reason.
func sameReason(a, b string) bool {
	return digits.ReplaceAllString(a, "N") == digits.ReplaceAllString(b, "N")
}

var digits = regexp.MustCompile(`[0-9]+`)

// search is one bisection's state.
type search struct {
	o       Options
	cands   []Candidate
	oracle  Oracle
	out     Outcome
	lo, hi  int
	skipped map[int]bool
	class   map[int]Class // tested builds' classes (old or new)
	weak    map[int]bool  // builds whose class rests on a weak observation
	side    int           // the side of a skipped stretch probed next: 0 left, 1 right
	t0      time.Time
	logf    func(string, ...any)
}

// Run bisects cands (oldest first; the first and last are the range's
// ends, both checked before the search).
//
// Skipped builds (unbuildable, or inconclusive) tend to come in
// stretches (work in progress, a broken subsystem). After a skip the
// search maps the stretch: it bisects, on each side in turn, the untested
// builds between the stretch and the range's end, so either edge is found
// in log2 of that distance whatever the stretch's length, and it stops
// probing a stretch whose edges are known. Untested builds between two
// skipped ones are taken to belong to the stretch. When the boundary lies
// inside one, the answer is every build from the stretch's old edge to its
// new edge: "the first bad is one of these N". (Probing at growing
// distances from the skip, 1, 2, 4, ..., took 17.8 steps on average for a
// 40-commit stretch in 1108 commits against 15.5 for this, and the same
// for a single skipped commit; see TestAStretchOfSkipsIsMappedQuickly.)
func Run(ctx context.Context, cands []Candidate, oracle Oracle, o Options) Outcome {
	s := &search{o: o, cands: cands, oracle: oracle, out: Outcome{FindFix: o.FindFix, Range: cands}, skipped: map[int]bool{},
		class: map[int]Class{}, weak: map[int]bool{}, t0: time.Now(), logf: o.Logf}
	if s.logf == nil {
		s.logf = func(string, ...any) {}
	}
	s.run(ctx)
	s.out.Progress = ""
	return s.out
}

func (s *search) run(ctx context.Context) {
	cands, o := s.cands, s.o
	oldT, newT := o.terms()
	if len(cands) < 2 {
		s.out.Unmet = "the range holds fewer than two builds"
		return
	}
	s.lo, s.hi = 0, len(cands)-1
	interrupted := func() bool {
		if ctx.Err() != nil {
			s.out.Unmet = "interrupted: " + ctx.Err().Error()
			return true
		}
		return false
	}
	if c := s.testAt(ctx, s.lo); c != Old {
		if !interrupted() {
			s.out.Unmet = fmt.Sprintf("the %s end %s is not %s: %s", oldT, cands[s.lo], oldT, lastReason(s.out))
		}
		return
	}
	if c := s.testAt(ctx, s.hi); c != New {
		if !interrupted() {
			s.out.Unmet = fmt.Sprintf("the %s end %s is not %s: %s", newT, cands[s.hi], newT, lastReason(s.out))
		}
		return
	}
	for {
		if s.narrow(ctx) {
			return
		}
		// An answer never rests on a weak observation: an edge classified
		// by one is run again on verdicts alone. Confirmed, it stands;
		// otherwise it is skipped (or takes the class its verdict gives)
		// and the search goes on from the nearest edges verdicts support.
		e := s.weakEdge()
		if e < 0 && s.hi-s.lo != 1 {
			s.answerRange("")
			return
		}
		if e < 0 {
			first := cands[s.hi]
			s.out.First = &first
			s.edges()
			return
		}
		want := s.class[e]
		s.logf("bisect: %s was classified %s on a weak observation: running it again on verdicts alone", cands[e], want)
		strict := s.o
		strict.Strict = true
		c := (&search{o: strict, cands: s.cands, oracle: s.oracle, out: s.out, logf: s.logf}).testInto(ctx, e, &s.out)
		delete(s.weak, e)
		if ctx.Err() != nil {
			s.answerRange("interrupted (" + ctx.Err().Error() + ")")
			return
		}
		switch {
		case c == want:
			s.logf("bisect: %s confirmed %s by a verdict", cands[e], want)
			continue
		case c == Old || c == New:
			s.class[e] = c
		default:
			s.skipped[e] = true
			delete(s.class, e)
		}
		s.lo, s.hi = s.nearest(Old, -1, s.hi), s.nearest(New, +1, s.lo)
		if s.lo < 0 || s.hi < 0 {
			s.out.Unmet = fmt.Sprintf("%s was %s only on a weak observation, and its verdict on a rerun was not: no end of the range rests on verdicts", cands[e], want)
			return
		}
	}
}

// narrow bisects between lo and hi until nothing is left to test; true
// when it answered already (a deadline, an interrupt).
func (s *search) narrow(ctx context.Context) bool {
	for {
		p, side := s.next()
		if p < 0 {
			return false
		}
		if !s.o.Deadline.IsZero() && time.Now().After(s.o.Deadline) {
			s.answerRange(fmt.Sprintf("the time given ran out with %d builds between %s and %s untested", s.hi-s.lo-1-s.skippedIn(), s.cands[s.lo].Label, s.cands[s.hi].Label))
			return true
		}
		switch s.testAt(ctx, p) {
		case Old:
			s.lo = p
		case New:
			s.hi = p
		default:
			s.skipped[p] = true
		}
		if side >= 0 {
			s.side = 1 - side
		}
		if ctx.Err() != nil {
			s.answerRange("interrupted (" + ctx.Err().Error() + ")") // the range left is still an answer
			return true
		}
		s.progress()
	}
}

// testAt tests candidate i and remembers its class, and whether a weak
// observation gave it.
func (s *search) testAt(ctx context.Context, i int) Class {
	c := s.test(ctx, i)
	if c == Old || c == New {
		s.class[i] = c
		if last := s.out.Steps[len(s.out.Steps)-1]; last.Weak != "" {
			s.weak[i] = true
		}
	}
	return c
}

// testInto runs test on another search's options, its steps going into out.
func (s *search) testInto(ctx context.Context, i int, out *Outcome) Class {
	s.out = *out
	c := s.test(ctx, i)
	*out = s.out
	return c
}

// weakEdge is the edge (lo or hi) whose class rests on a weak
// observation, -1 when both rest on verdicts.
func (s *search) weakEdge() int {
	switch {
	case s.weak[s.hi]:
		return s.hi
	case s.weak[s.lo]:
		return s.lo
	}
	return -1
}

// nearest is the tested build of class c nearest to from in direction dir
// (-1 older, +1 newer), -1 when there is none.
func (s *search) nearest(c Class, dir, from int) int {
	for i := from + dir; i >= 0 && i < len(s.cands); i += dir {
		if s.class[i] == c {
			return i
		}
	}
	return -1
}

// skippedIn counts the skipped builds strictly inside the range.
func (s *search) skippedIn() int {
	n := 0
	for i := range s.skipped {
		if i > s.lo && i < s.hi {
			n++
		}
	}
	return n
}

// stretch is the span of skipped builds inside the range (ok false when
// there are none).
func (s *search) stretch() (l, r int, ok bool) {
	l, r = s.hi, s.lo
	for i := range s.skipped {
		if i > s.lo && i < s.hi {
			l, r, ok = min(l, i), max(r, i), true
		}
	}
	return l, r, ok
}

// next picks the next build to test and the side of a stretch it probes
// (-1: plain bisection), or -1 when the range cannot be narrowed further.
func (s *search) next() (p, side int) {
	if s.hi-s.lo <= 1 {
		return -1, -1
	}
	l, r, ok := s.stretch()
	if !ok {
		return (s.lo + s.hi) / 2, -1
	}
	gaps := [2]int{l - s.lo - 1, s.hi - r - 1} // untested builds left and right of the stretch
	if gaps[0] == 0 && gaps[1] == 0 {
		return -1, -1 // the stretch's edges are known
	}
	side = s.side
	if gaps[side] == 0 {
		side = 1 - side
	}
	d := (gaps[side] + 1) / 2
	if side == 0 {
		return l - d, 0
	}
	return r + d, 1
}

// test runs one candidate: a verdict classifies it; an INCONCLUSIVE run
// with a weak observation counts as the reproducing side (unless Strict);
// otherwise it is rerun while its reason may be transient, then skipped.
func (s *search) test(ctx context.Context, i int) Class {
	o := s.o
	oldT, newT := o.terms()
	c := s.cands[i]
	prev := ""
	for attempt := 1; attempt <= 1+max(o.Retries, 0); attempt++ {
		if ctx.Err() != nil {
			return Skip
		}
		t0 := time.Now()
		r := s.oracle(ctx, c)
		st := Step{Candidate: c, Attempt: attempt, Verdict: r.Verdict, Violated: r.TrialsViolated, Trials: r.TrialsRun,
			Reason: r.Reason, Duration: time.Since(t0), Suite: time.Duration(r.DurationS * float64(time.Second)), Class: o.classify(r.Verdict), Lasting: r.Lasting}
		if st.Class == "" && r.Weak != "" && !o.Strict {
			st.Class, st.Weak = o.classify(verdict.Reproduced), r.Weak
		}
		again := st.Class == "" && !r.Lasting && attempt < 1+max(o.Retries, 0) && (attempt == 1 || !sameReason(prev, r.Reason))
		if st.Class == "" && !again {
			st.Class = Skip
		}
		prev = r.Reason
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
		if st.Weak != "" {
			st.Term += " (weak)"
		}
		s.out.Steps = append(s.out.Steps, st)
		why := r.Reason
		if st.Weak != "" {
			why += "; weak observation: " + st.Weak
		}
		s.logf("bisect: %s: %s in %s (%s) -> %s", c, r.Verdict, st.Duration.Round(time.Second), why, st.Term)
		if st.Class != "" {
			return st.Class
		}
	}
	return Skip
}

// progress says what is left, and hands the outcome so far to OnStep.
func (s *search) progress() {
	skipped := s.skippedIn()
	togo := s.stepsToGo()
	runs := len(s.out.Steps)
	spent := time.Since(s.t0)
	per := spent / time.Duration(max(runs, 1))
	s.out.Progress = fmt.Sprintf("%d untested builds left between %s and %s (%d skipped there); %d runs so far in %s; about %d more steps (~%s)",
		s.hi-s.lo-1-skipped, s.cands[s.lo].Label, s.cands[s.hi].Label, skipped, runs, spent.Round(time.Second), togo, (per * time.Duration(togo)).Round(time.Second))
	s.logf("bisect: %s", s.out.Progress)
	if s.o.OnStep != nil {
		s.o.OnStep(s.out)
	}
}

// stepsToGo estimates the steps left: a binary search over the range, or
// over each side of a skipped stretch.
func (s *search) stepsToGo() int {
	l, r, ok := s.stretch()
	if !ok {
		return log2ceil(s.hi - s.lo)
	}
	return log2ceil(l-s.lo) + log2ceil(s.hi-r)
}

// log2ceil is the binary-search steps that narrow n gaps to one.
func log2ceil(n int) int {
	k := 0
	for m := 1; m < n; m *= 2 {
		k++
	}
	return k
}

// edges records the tested builds around the answer.
func (s *search) edges() {
	lo, hi := s.cands[s.lo], s.cands[s.hi]
	s.out.LastOld, s.out.FirstNew = &lo, &hi
}

// answerRange answers with every build after lo up to hi: the first of
// the new kind is one of them.
func (s *search) answerRange(why string) {
	_, newT := s.o.terms()
	s.edges()
	s.out.Suspects = append([]Candidate(nil), s.cands[s.lo+1:s.hi+1]...)
	if why == "" {
		skipped, between := s.skippedIn(), s.hi-s.lo-1
		why = fmt.Sprintf("%d build(s) between %s and %s could not be tested", between, s.cands[s.lo].Label, s.cands[s.hi].Label)
		if skipped < between {
			why = fmt.Sprintf("%d build(s) between %s and %s could not be tested (%d skipped, the rest lie inside the skipped stretch)", between, s.cands[s.lo].Label, s.cands[s.hi].Label, skipped)
		}
	}
	s.out.Unmet = fmt.Sprintf("%s; the first %s build is one of these %d", why, newT, len(s.out.Suspects))
}

func lastReason(o Outcome) string {
	s := o.Steps[len(o.Steps)-1]
	return fmt.Sprintf("%s (%s)", s.Verdict, s.Reason)
}

// Markdown renders the outcome: the answer, what it cost, then every
// step, ready for the upstream issue (also while the search runs).
func (o Outcome) Markdown(suite, title string) string {
	var b strings.Builder
	oldT, newT := Options{FindFix: o.FindFix}.terms()
	kind := "first bad build (the issue reproduces from here on)"
	if o.FindFix {
		kind = "first good build (the issue is fixed from here on)"
	}
	fmt.Fprintf(&b, "### harp bisect: #%s %s\n\n", suite, title)
	if len(o.Range) > 0 {
		fmt.Fprintf(&b, "Range: %s .. %s (%d builds).\n\n", o.Range[0].Label, o.Range[len(o.Range)-1].Label, len(o.Range))
	}
	switch {
	case o.Progress != "":
		fmt.Fprintf(&b, "**In progress**: %s.\n\n", o.Progress)
	case o.First != nil:
		fmt.Fprintf(&b, "**%s**: `%s`", kind, o.First.Label)
		if o.First.Subject != "" {
			fmt.Fprintf(&b, " %s", o.First.Subject)
		}
		if o.First.Commit != "" {
			fmt.Fprintf(&b, " (commit %s)", o.First.Commit)
		}
		b.WriteString("\n\n")
	case len(o.Suspects) > 0:
		why, _, _ := strings.Cut(o.Unmet, "; the first ")
		fmt.Fprintf(&b, "**The %s is one of these %d**, after `%s` (%s) up to `%s` (%s): %s.\n\n",
			strings.SplitN(kind, " (", 2)[0], len(o.Suspects), o.LastOld, oldT, o.FirstNew, newT, why)
		b.WriteString(o.suspectList())
	default:
		fmt.Fprintf(&b, "**No answer**: %s\n\n", o.Unmet)
	}
	var weak []string
	for _, s := range o.Steps {
		if s.Weak != "" {
			weak = append(weak, fmt.Sprintf("`%s` (%s)", s.Candidate.Label, s.Weak))
		}
	}
	if len(weak) > 0 {
		fmt.Fprintf(&b, "Weak observations (INCONCLUSIVE runs that still showed the bug's signature; `--strict` ignores them) narrowed the search: %s. The answer's edges rest on verdicts only: a build classified on a weak observation at an edge was run again, and kept only when its verdict agreed.\n\n", strings.Join(weak, "; "))
	}
	b.WriteString(o.cost())
	b.WriteString("| # | build | verdict | trials | term | duration (suite) | reason |\n|---|---|---|---|---|---|---|\n")
	for i, s := range o.Steps {
		fmt.Fprintf(&b, "| %d | `%s` | %s | %d/%d | %s | %.1f s (%.1f s) | %s |\n", i+1, strings.ReplaceAll(s.Candidate.String(), "|", "\\|"), s.Verdict, s.Violated, s.Trials, s.Term,
			s.Duration.Seconds(), s.Suite.Seconds(), strings.ReplaceAll(firstLine(s.Reason), "|", "\\|"))
	}
	return b.String()
}

// suspectList lists the suspects with what is known of each (the first
// 60; bisect.json holds them all).
func (o Outcome) suspectList() string {
	var b strings.Builder
	known := map[string]Step{}
	var reasons []string
	count := map[string]int{}
	for _, s := range o.Steps {
		known[s.Candidate.Label] = s
		if s.Class == Skip {
			r := digits.ReplaceAllString(firstLine(s.Reason), "N")
			if count[r] == 0 {
				reasons = append(reasons, r)
			}
			count[r]++
		}
	}
	for i, c := range o.Suspects {
		if i == 60 {
			fmt.Fprintf(&b, "- ... and %d more (bisect.json lists them all)\n", len(o.Suspects)-i)
			break
		}
		state := "not tested (inside the skipped stretch)"
		if s, ok := known[c.Label]; ok {
			state = fmt.Sprintf("%s (%s)", s.Term, s.Verdict)
		}
		fmt.Fprintf(&b, "- `%s`: %s\n", strings.ReplaceAll(c.String(), "`", "'"), state)
	}
	if len(reasons) > 0 {
		b.WriteString("\nWhy builds were skipped (numbers as N):\n\n")
		for _, r := range reasons {
			fmt.Fprintf(&b, "- %d run(s): %s\n", count[r], r)
		}
	}
	b.WriteString("\n")
	return b.String()
}

// cost sums up what the search took: runs by term, and time.
func (o Outcome) cost() string {
	if len(o.Steps) == 0 {
		return ""
	}
	terms := map[string]int{}
	var total, suites, longest time.Duration
	for _, s := range o.Steps {
		terms[s.Term]++
		total += s.Duration
		suites += s.Suite
		longest = max(longest, s.Duration)
	}
	var names, parts []string
	for t := range terms {
		names = append(names, t)
	}
	sort.Strings(names)
	for _, t := range names {
		parts = append(parts, fmt.Sprintf("%d %s", terms[t], t))
	}
	return fmt.Sprintf("Cost: %d runs (%s) in %s (%s of it building), %s a run on average, the longest %s.\n\n", len(o.Steps), strings.Join(parts, ", "),
		total.Round(time.Second), (total - suites).Round(time.Second), (total / time.Duration(len(o.Steps))).Round(time.Second), longest.Round(time.Second))
}

func firstLine(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	return first
}

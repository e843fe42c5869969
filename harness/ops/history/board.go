package history

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/harp-project/harp/harness/core/verdict"
	"github.com/harp-project/harp/harness/ops/findings"
	"github.com/harp-project/harp/harness/ops/report"
)

// Status is where harp stands on one fix.
type Status string

const (
	Caught       Status = "caught"         // REPRODUCED on the bad release, PASS on the fixed one
	Missed       Status = "missed"         // observable, and no check saw it on the bad release (a retired check included)
	NoCheck      Status = "no check yet"   // observable, no finding names it
	Inconclusive Status = "inconclusive"   // a release's verdict was neither
	NotRun       Status = "not run"        // the check exists, a release has no cell in the runs
	NotCleared   Status = "not cleared"    // REPRODUCED on the fixed release too
	Unobservable Status = "not observable" // judged out of a black-box harness's reach
	Unjudged     Status = "not judged"
	Unreleased   Status = "not released" // no .0 release holds the fix yet
	Flaky        Status = "flaky"        // the trials of a cell disagree, and no catch holds
	// SuiteOnly: the suite named REPRODUCED on the bad release and PASS on
	// the fixed one, but the catch names no check of it: any violation of
	// the suite would read the same, so it is no catch of this fix.
	SuiteOnly Status = "suite only"
)

// Row is one fix on the scoreboard.
type Row struct {
	Fix
	Judgement
	Judged  bool   `json:"judged"`
	OnBad   string `json:"verdict_bad,omitempty"` // a verdict, or "" when no cell ran
	OnFixed string `json:"verdict_fixed,omitempty"`
	// Why the verdicts are what they are (the first deciding result's reason).
	BadWhy   string `json:"verdict_bad_reason,omitempty"`
	FixedWhy string `json:"verdict_fixed_reason,omitempty"`
	// The verdicts on the fix's parent and on the fix, where the runs hold
	// builds of those commits.
	OnParent string `json:"verdict_parent,omitempty"`
	OnCommit string `json:"verdict_commit,omitempty"`
	// AtCommit: the status comes from the commit pair, not the releases
	// (they ran no cell, or had no bug to show: it came and went between them).
	AtCommit bool   `json:"at_commit,omitempty"`
	Status   Status `json:"status"`
	// Bisect: what a bisect of the fix's check answered (WithBisects),
	// and whether that is a commit the fix's message names.
	Bisect       *Bisected `json:"bisect,omitempty"`
	BisectAgrees bool      `json:"bisect_agrees,omitempty"`
	// Related: why the commit the fix names is not its bug's cause (no
	// bisect is owed).
	Related string `json:"related,omitempty"`
}

// Board is the scoreboard: every fix, and the counts a closing note gives.
type Board struct {
	Rows   []Row          `json:"rows"`
	Counts map[Status]int `json:"counts"`
	// Observable is how many fixes a black-box harness can see.
	Observable int `json:"observable"`
	// Runs are the run directories the verdicts came from.
	Runs []string `json:"runs,omitempty"`
	// Makers counts those runs by the harp that made them: a scoreboard
	// whose runs came from many harp commits is not one rerun of today's
	// code, and the doc says so.
	Makers Makers `json:"makers"`
	// Head is the newest commit looked at (git describe).
	Head string `json:"head,omitempty"`
	// Unused are the runs given that fill no column, with why: a run
	// silently left out reads as a fix not run.
	Unused []UnusedRun `json:"unused_runs,omitempty"`
}

// Makers counts runs by the harp that made them, from each run's record
// of harp's version ("harp (devel) (commit 0123456789ab, go1.26)").
type Makers struct {
	Runs    int            `json:"runs"`
	Commits map[string]int `json:"commits,omitempty"` // runs by harp's commit
	Unknown int            `json:"unknown,omitempty"` // runs that record no commit
	Changed int            `json:"changed,omitempty"` // made from a tree with uncommitted changes
}

var makerCommit = regexp.MustCompile(`commit ([0-9a-f]{7,40})(\+changes)?`)

func (m *Makers) add(harp string) {
	m.Runs++
	c := makerCommit.FindStringSubmatch(harp)
	if c == nil {
		m.Unknown++
		return
	}
	if m.Commits == nil {
		m.Commits = map[string]int{}
	}
	m.Commits[c[1]]++
	if c[2] != "" {
		m.Changed++
	}
}

// String: "148 runs of 43 harp commits; 3 record no commit; 9 from a
// tree with uncommitted changes", or "3 runs of one harp commit, 0123…".
func (m Makers) String() string {
	s := fmt.Sprintf("%d runs", m.Runs)
	switch len(m.Commits) {
	case 0:
	case 1:
		for c := range m.Commits {
			s += " of one harp commit, " + c
		}
	default:
		s += fmt.Sprintf(" of %d harp commits (not one rerun of one harp's code)", len(m.Commits))
	}
	if m.Unknown > 0 {
		s += fmt.Sprintf("; %d record no harp commit", m.Unknown)
	}
	if m.Changed > 0 {
		s += fmt.Sprintf("; %d made from a tree with uncommitted changes", m.Changed)
	}
	return s
}

// UnusedRun is a run the board took no verdict from, and why.
type UnusedRun struct {
	Dir string `json:"dir"`
	Why string `json:"why"`
}

// Make joins the fixes with their judgements and the verdicts the runs
// hold on each fix's bad and fixed release.
func Make(fixes []Fix, js map[string]Judgement, runs []findings.Scanned) Board {
	b := Board{Counts: map[Status]int{}}
	used := make([]bool, len(runs)) // runs that gave a verdict to some cell
	for _, f := range fixes {
		row := Row{Fix: f}
		row.Judgement, row.Judged = judgementOf(js, f.Commit)
		row.Judgement.Commit = f.Short()
		switch {
		case !row.Judged:
			row.Status = Unjudged
		case !row.Observable:
			row.Status = Unobservable
		case row.Retired():
			row.Status = Missed
		case !row.Caught():
			row.Status = NoCheck
		case f.Fixed == "":
			var bad Tally
			bad, row.BadWhy = onRelease(runs, used, f.Bad, row.Catch)
			row.OnBad = bad.String()
			row.Status = Unreleased
		default:
			var bad, fixed Tally
			bad, row.BadWhy = onRelease(runs, used, f.Bad, row.Catch)
			fixed, row.FixedWhy = onRelease(runs, used, f.Fixed, row.Catch)
			row.OnBad, row.OnFixed = bad.String(), fixed.String()
			row.Status = status(bad, fixed)
			if row.CameAfter(f.Bad) {
				// The bad release predates the bug: whatever it showed is
				// not this fix's violation; the pair below decides.
				row.Status = NotRun
			}
		}
		if row.Judged && row.Observable && row.Caught() {
			parent, _ := on(runs, used, row.Catch, func(r report.Result) bool { return sameCommit(CommitOf(r), f.Parent) })
			commit, _ := on(runs, used, row.Catch, func(r report.Result) bool { return sameCommit(CommitOf(r), f.Commit) })
			row.OnParent, row.OnCommit = parent.String(), commit.String()
			// The pair decides where the releases did not catch the fix:
			// they ran nothing, or the bug came in after the bad release
			// (a missed release is then no miss of harp's: the pair says).
			if at := status(parent, commit); row.Status != Caught && at != NotRun && (row.Status != NotCleared || at == Caught) {
				row.Status, row.AtCommit = at, true
			}
			if row.Status == Caught && row.SuiteOnly() {
				row.Status = SuiteOnly
			}
		}
		if row.Judged && row.Observable {
			b.Observable++
		}
		b.Counts[row.Status]++
		b.Rows = append(b.Rows, row)
	}
	for i, r := range runs {
		if used[i] {
			b.Runs = append(b.Runs, r.Dir)
			b.Makers.add(r.Run.Harp)
		} else {
			b.Unused = append(b.Unused, UnusedRun{Dir: r.Dir, Why: whyUnused(r.Run, b.Rows)})
		}
	}
	return b
}

// whyUnused says why a run filled no column: it holds no result, none of
// its suites holds a check a judgement names, or none of its builds is a
// release or commit a fix's columns read.
func whyUnused(run report.Run, rows []Row) string {
	var suites, builds []string
	answers := false
	for _, r := range run.Results {
		if r.Suite == "crash" {
			continue
		}
		suites = appendNew(suites, r.Suite)
		for _, row := range rows {
			if !row.Judged || !row.Observable || !row.Caught() {
				continue
			}
			for _, sig := range strings.Split(row.Catch, ",") {
				base, _ := splitFlavor(sig)
				if s := findings.SuiteOf(base); s == "" || report.Answers(r.Suite, s) {
					answers = true
					build := TagOf(r)
					if build == "" {
						build = CommitOf(r)
					}
					if build == "" {
						build = r.Origin
					}
					builds = appendNew(builds, build)
				}
			}
		}
	}
	switch {
	case len(suites) == 0:
		return "it holds no results"
	case !answers:
		return fmt.Sprintf("none of its suites (%s) holds a check a judgement names", strings.Join(suites, ", "))
	}
	return fmt.Sprintf("none of its builds (%s) is a fix's bad or fixed release, nor a fix or its parent", strings.Join(builds, ", "))
}

func appendNew(xs []string, x string) []string {
	for _, y := range xs {
		if y == x {
			return xs
		}
	}
	return append(xs, x)
}

// Tally is one cell's verdicts over its trials: every result of the
// check on the build, from every run given.
type Tally struct {
	N, Reproduced, Pass, Inconclusive, Error int
}

func (t *Tally) add(v verdict.Verdict) {
	t.N++
	switch v {
	case verdict.Reproduced:
		t.Reproduced++
	case verdict.Pass:
		t.Pass++
	case verdict.Inconclusive:
		t.Inconclusive++
	default:
		t.Error++
	}
}

// String is the cell as the board shows it: "" when no trial ran, the
// verdict alone for one trial, else each verdict with its count of the
// trials ("REPRODUCED 2/3, PASS 1/3").
func (t Tally) String() string {
	var parts []string
	for _, c := range []struct {
		v verdict.Verdict
		n int
	}{{verdict.Reproduced, t.Reproduced}, {verdict.Pass, t.Pass}, {verdict.Inconclusive, t.Inconclusive}, {verdict.Error, t.Error}} {
		switch {
		case c.n == 0:
		case t.N == 1:
			return string(c.v)
		default:
			parts = append(parts, fmt.Sprintf("%s %d/%d", c.v, c.n, t.N))
		}
	}
	return strings.Join(parts, ", ")
}

// status reads a fix's two cells. A catch needs the check REPRODUCED on
// the bad build in a majority of its trials and PASS in every trial on
// the fixed one; trials that disagree where no catch holds are flaky,
// never a catch and never a miss.
func status(bad, fixed Tally) Status {
	switch {
	case bad.N == 0 || fixed.N == 0:
		return NotRun
	case bad.Pass == bad.N:
		return Missed
	case 2*bad.Reproduced > bad.N && fixed.Pass == fixed.N:
		return Caught
	case 2*bad.Reproduced > bad.N && fixed.Reproduced == fixed.N:
		return NotCleared
	case bad.Reproduced > 0 && bad.Pass > 0, fixed.Reproduced > 0 && fixed.Pass > 0:
		return Flaky
	}
	return Inconclusive
}

// describeIn is the `git describe` an origin line carries.
var describeIn = regexp.MustCompile(`^git .* commit [0-9a-f]+ \(([^)]+)\)`)

// TagOf is the release tag a result's build is exactly ("" for any other
// build: a commit between tags, a Debian package).
func TagOf(r report.Result) string {
	if m := describeIn.FindStringSubmatch(r.Origin); m != nil {
		if _, _, ok := releaseKey(m[1]); ok {
			return m[1]
		}
	}
	return ""
}

// originCommit is the commit an origin line of a git build names.
var originCommit = regexp.MustCompile(`^git .* commit ([0-9a-f]{7,40})\b`)

// CommitOf is the commit a result's build was made from ("" for a build
// not made from git).
func CommitOf(r report.Result) string {
	if m := originCommit.FindStringSubmatch(r.Origin); m != nil {
		return m[1]
	}
	return ""
}

// sameCommit: two ids of one commit, either maybe abbreviated.
func sameCommit(a, b string) bool {
	n := min(len(a), len(b))
	return n >= 7 && a[:n] == b[:n]
}

// onRelease is harp's cell on one release for a catch, over every run
// that has the release.
func onRelease(runs []findings.Scanned, used []bool, tag, catch string) (Tally, string) {
	if tag == "" {
		return Tally{}, ""
	}
	return on(runs, used, catch, func(r report.Result) bool { return TagOf(r) == tag })
}

// on is harp's cell for a catch over the results of the builds that build
// selects: one trial per result (a suite run on the build), its verdict
// over the catch's signatures (separated by commas: REPRODUCED when any
// shows, PASS when every one was looked for and not seen, else the worst
// other). The runs that gave one are marked in used; why is the reason of
// the first trial with the cell's most telling verdict.
func on(runs []findings.Scanned, used []bool, catch string, build func(report.Result) bool) (Tally, string) {
	sigs := strings.Split(catch, ",")
	order := []verdict.Verdict{verdict.Reproduced, verdict.Pass, verdict.Inconclusive, verdict.Error}
	var t Tally
	whys := map[verdict.Verdict]string{}
	for i, run := range runs {
		for _, r := range run.Run.Results {
			if !build(r) || r.Suite == "crash" {
				continue
			}
			var got []verdict.Verdict
			reasons := map[verdict.Verdict]string{}
			for _, sig := range sigs {
				sig, fl := splitFlavor(sig)
				if flavorOf(r) != fl {
					continue
				}
				if s := findings.SuiteOf(sig); s != "" && !report.Answers(r.Suite, s) {
					continue
				}
				if notRun(r, sig) || notInRun(run.Run, r.Suite, sig) {
					continue
				}
				v, why := findings.Verdict(r, sig)
				got = append(got, v)
				if _, ok := reasons[v]; !ok {
					reasons[v] = why
				}
				used[i] = true
			}
			if len(got) == 0 {
				continue
			}
			v := got[0]
			for _, want := range order {
				if slices.Contains(got, want) {
					v = want
					break
				}
			}
			t.add(v)
			if _, ok := whys[v]; !ok {
				whys[v] = reasons[v]
			}
		}
	}
	for _, want := range order {
		if why, ok := whys[want]; ok {
			return t, why
		}
	}
	return t, ""
}

// owesNoBisect counts the caught fixes whose named commit related.tsv
// takes out of the bisects owed.
func (b Board) owesNoBisect() int {
	n := 0
	for _, r := range b.Rows {
		if r.Status == Caught && r.Related != "" {
			n++
		}
	}
	return n
}

// notRun says whether a result holds no trial of a check at all: this
// check is not among those it counts, and every trial of the result
// decided (PASS, or REPRODUCED without an inconclusive trial), so the
// check was not run there (a harp without it, or one whose judge of that
// suite named no checks yet: its whole-suite verdict is no answer of the
// check's) or did not apply to the build. A check missing where some trial
// was inconclusive may be that trial's: it stays an INCONCLUSIVE trial.
// notInRun says whether a run on several builds counted a check on none
// of them, while it counted others of that suite: its harp had no such
// check (a case added since), so a result there with an inconclusive
// trial holds no trial of it either. A run on one build gives no such
// evidence, and a check inconclusive on every build of a run would read
// as not run: a trial lost, never one gained.
func notInRun(run report.Run, suite, sig string) bool {
	_, check, ok := strings.Cut(sig, "/")
	if !ok || strings.HasPrefix(sig, "crash/") {
		return false
	}
	results, counted := 0, false
	for _, r := range run.Results {
		if r.Suite != suite {
			continue
		}
		results++
		for _, c := range r.Checks {
			if c.ID == check {
				return false
			}
			counted = true
		}
	}
	return results > 1 && counted
}

func notRun(r report.Result, sig string) bool {
	_, check, ok := strings.Cut(sig, "/")
	if !ok || strings.HasPrefix(sig, "crash/") {
		return false
	}
	for _, c := range r.Checks {
		if c.ID == check {
			return false
		}
	}
	return r.Verdict == verdict.Pass || r.Verdict == verdict.Reproduced && !strings.Contains(r.Reason, " inconclusive")
}

// Markdown renders the board: the counts, then every fix oldest first.
func (b Board) Markdown(command string) string {
	var s strings.Builder
	fmt.Fprintf(&s, "# Upstream's bug history as harp's scoreboard\n\n")
	fmt.Fprintf(&s, "Generated by `%s`; do not edit by hand (the judgements are in `fixtures/upstream-bugs/judgements.tsv`, and in `fixtures/upstream-bugs/techniques.tsv` for the fixes judged again against what harp can do: each names its technique, or why none would do).", command)
	if b.Head != "" {
		fmt.Fprintf(&s, " History up to %s.", b.Head)
	}
	s.WriteString("\n\n")
	fmt.Fprintf(&s, "Every `BUG/` commit on HAProxy's master line touching %s (src/haproxy.c: its reload and master-worker paths only). "+
		"*Bad* is the last .0 release without the fix and *fixed* the first with it; a fix is **caught** when harp's check is REPRODUCED on the bad release in a majority of its trials (every result of the check on that build, over the runs given) and PASS in every trial on the fixed one; trials that disagree where no catch holds make it **flaky**. A catch names the check whose violation is the fix's: a whole suite's verdict, which any of its violations would give, is **suite only**, not a catch. A fix whose bug came in after its bad release (its judgement names a later development tag as the origin) is judged on its parent and itself alone: the bad release never had that bug.\n\n", strings.Join(Files, ", "))
	caught := b.Counts[Caught]
	fmt.Fprintf(&s, "| | fixes |\n|---|---:|\n| all | %d |\n| observable from outside | %d |\n", len(b.Rows), b.Observable)
	for _, st := range []Status{Caught, SuiteOnly, Missed, NotCleared, Flaky, Inconclusive, NotRun, NoCheck, Unreleased, Unobservable, Unjudged} {
		if n := b.Counts[st]; n > 0 {
			fmt.Fprintf(&s, "| %s | %d |\n", st, n)
		}
	}
	s.WriteString("\n")
	if b.Observable > 0 {
		fmt.Fprintf(&s, "Caught: %d of %d observable fixes (%.0f%%)", caught, b.Observable, 100*float64(caught)/float64(b.Observable))
		if n := b.atCommit(Caught); n > 0 {
			fmt.Fprintf(&s, ", %d of them on the fix's parent and the fix itself (git builds of the two commits: the bug came and went between releases, or the releases could not show it)", n)
		}
		s.WriteString(".\n")
	}
	if bs := b.Bisectable(); len(bs) > 0 {
		ran, agree := 0, 0
		for _, r := range bs {
			if r.Bisect != nil {
				ran++
				if r.BisectAgrees {
					agree++
				}
			}
		}
		fmt.Fprintf(&s, "Bisected to the origin: %d of the %d caught fixes whose message names a commit after %s as the bug's cause (their check the oracle, `harp bisect --finding`, between the last release without that commit and the bad release, or the fix's parent where the bug came after it); %d of them name a commit the fix names (the bisect column).", ran, len(bs), "v2.6.0", agree)
		if n := b.owesNoBisect(); n > 0 {
			fmt.Fprintf(&s, " %d more caught fixes owe none: the commit their message names is related to the bug, not its cause, or the cause out of a bisect's reach (the bisect column says why).", n)
		}
		s.WriteString("\n")
	}
	if len(b.Runs) > 0 {
		fmt.Fprintf(&s, "Verdicts from the runs: %s.\n", strings.Join(b.Runs, ", "))
		fmt.Fprintf(&s, "Made by: %s.\n", b.Makers)
	}
	if len(b.Unused) > 0 {
		var us []string
		for _, u := range b.Unused {
			us = append(us, u.Dir+": "+u.Why)
		}
		fmt.Fprintf(&s, "Runs given and not used (they fill no column): %s.\n", cell(strings.Join(us, "; ")))
	}
	bySev := map[string]int{}
	for _, r := range b.Rows {
		bySev[r.Severity]++
	}
	var sevs []string
	for k, n := range bySev {
		sevs = append(sevs, fmt.Sprintf("%s %d", k, n))
	}
	sort.Strings(sevs)
	fmt.Fprintf(&s, "By severity: %s.\n\n", strings.Join(sevs, ", "))
	s.WriteString("| fix | subject | first tag | bad → fixed | names | bisect | observable | caught by | on bad | on fixed | on parent → fix | status |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range b.Rows {
		obs := "?"
		if r.Judged {
			obs = "no"
			if r.Observable {
				obs = "yes"
			}
			switch {
			case r.Technique == "none":
				obs += " (no technique would do)"
			case r.Technique != "":
				obs += ", with " + strings.ReplaceAll(r.Technique, "+", " and ")
			}
			if r.Why != "" {
				obs += ": " + r.Why
			}
		}
		catch := r.Catch
		if catch == "" || catch == "-" {
			catch = "–"
		} else {
			catch = "`" + catch + "`"
		}
		fixed := r.Fixed
		if fixed == "" {
			fixed = "(unreleased)"
		}
		pair := "–"
		if r.OnParent != "" || r.OnCommit != "" {
			pair = orDash(r.OnParent) + " → " + orDash(r.OnCommit)
		}
		st := string(r.Status)
		if r.AtCommit {
			st += " (at the commit)"
		}
		fmt.Fprintf(&s, "| `%s` | %s | %s | %s → %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r.Short(), cell(r.Subject), r.FirstTag, orDash(r.Bad), fixed,
			names(r.Names), bisectCell(r), cell(obs), cell(catch), orDash(r.OnBad), orDash(r.OnFixed), pair, st)
	}
	return s.String()
}

// names is the names cell: each commit the message names, with its tag
// ("before" the history's first release: no bisect between the releases
// harp builds can land there).
func names(ns []Named) string {
	if len(ns) == 0 {
		return "–"
	}
	var out []string
	for _, n := range ns {
		at := n.Tag
		if !n.After {
			at = "before the first release, " + orDash(n.Tag)
		}
		out = append(out, fmt.Sprintf("`%s` (%s)", n.Commit[:9], orDash(at)))
	}
	return strings.Join(out, ", ")
}

// atCommit counts the rows of a status that the commit pair decided.
func (b Board) atCommit(st Status) int {
	n := 0
	for _, r := range b.Rows {
		if r.Status == st && r.AtCommit {
			n++
		}
	}
	return n
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

// cell keeps a table cell on one line and its pipes literal.
func cell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\n", " "), "|", `\|`)
}

// Only keeps the verdicts of the fixes picked (a scoreboard run with
// --fixes) and makes every other run-judged row "not run". A unit runs a
// whole suite, so its release cells judge fixes nobody picked as a
// by-product, while their commit pairs were never planned: a release
// miss would read as a miss of harp's that the pair may not confirm.
func (b *Board) Only(picked func(Fix) bool) {
	b.Counts = map[Status]int{}
	for i := range b.Rows {
		r := &b.Rows[i]
		if !picked(r.Fix) {
			switch r.Status {
			case Caught, SuiteOnly, NotCleared, Flaky, Inconclusive, Unreleased, Missed:
				if r.Status == Missed && r.Retired() {
					break // the judgement's, not the runs'
				}
				r.Status = NotRun
				r.OnBad, r.OnFixed, r.OnParent, r.OnCommit, r.AtCommit = "", "", "", "", false
				r.BadWhy, r.FixedWhy = "not picked by --fixes", ""
			}
		}
		b.Counts[r.Status]++
	}
}

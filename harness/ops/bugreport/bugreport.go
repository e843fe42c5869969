// Package bugreport writes one finding as HAProxy's bug report form asks
// for it (.github/ISSUE_TEMPLATE/Bug.yml: description, expected
// behaviour, steps, cause, fix, configuration, haproxy -vv, outputs and
// backtraces, additional information), with what harp has of it: the
// builds that show it and those that do not, the standalone reproducer,
// the bisected first bad commit, and a fix with its proof.
package bugreport

import (
	"fmt"
	"sort"
	"strings"

	"github.com/harp-project/harp/harness/core/verdict"
	"github.com/harp-project/harp/harness/ops/bisect"
	"github.com/harp-project/harp/harness/ops/findings"
	"github.com/harp-project/harp/harness/ops/report"
)

// GitHub refuses issue bodies and comments over 65536 characters.
const MaxLen = 60000

// Inputs are what harp knows of one finding.
type Inputs struct {
	Finding findings.Finding
	// Shows is a result that showed it, evidence loaded (report.Load).
	Shows report.Result
	// Repro is the standalone reproducer's files by name (reproduce,
	// haproxy.cfg, ...); nil when none was written.
	Repro map[string]string
	// Bisect is a bisect of this finding (bisect.json); nil when none.
	Bisect *bisect.Outcome
	// Fix is a patch and the run that proves it; nil when none.
	Fix *Fix
	// RegTest is the finding as a reg-test in HAProxy's own form (a .vtc
	// file); given, the report is the short form: the reg-test first, the
	// long evidence folded and cut, at most MaxLines lines.
	RegTest *RegTest
}

// RegTest is a .vtc file: its name and text.
type RegTest struct{ Name, Text string }

// MaxLines bounds the short form (with a reg-test): what a maintainer
// reads first fits a screenful or three; harp's evidence keeps the rest.
const MaxLines = 200

// Fix is a patch and its proof: a run with the same base built with and
// without it, every suite on both.
type Fix struct {
	Name  string // the patch's file name
	Patch string
	Proof report.Run
}

// Markdown renders the report, at most MaxLen characters: long blocks are
// cut at line boundaries (the evidence keeps them whole).
func Markdown(in Inputs) string {
	f, r := in.Finding, in.Shows
	var b strings.Builder
	fmt.Fprintf(&b, "<!-- harp finding %s: %s -->\n\n", f.ID, f.Signature)

	b.WriteString("### Detailed Description of the Problem\n\n")
	fmt.Fprintf(&b, "%s: %s.\n\n", r.Title, strings.TrimSuffix(f.Example, "."))
	fmt.Fprintf(&b, "Shown by %s; not shown by %s (in runs where it was looked for).\n\n", builds(f.Shows), orNone(builds(f.Clean)))
	fmt.Fprintf(&b, "Found by [harp](https://github.com/harp-project/harp), a black-box harness: suite `%s`, check `%s` (finding `%s`).\n\n", f.Suite, f.Check, f.ID)

	b.WriteString("### Expected Behavior\n\n")
	expect := false
	for _, s := range r.Steps {
		if strings.HasPrefix(s, "Expectation") {
			fmt.Fprintf(&b, "%s\n\n", s)
			expect = true
		}
	}
	if !expect {
		fmt.Fprintf(&b, "%s.\n\n", r.Title)
	}

	b.WriteString("### Steps to Reproduce the Behavior\n\n")
	short := in.RegTest != nil
	if short {
		fmt.Fprintf(&b, "A reg-test in HAProxy's own form: save it as `reg-tests/mcli/%s` (or anywhere) and run `HAPROXY_PROGRAM=/path/to/haproxy vtest -t 10 %s` (Debian's `varnishtest` runs it too); it fails where the bug shows and passes with the fix.\n\n```\n%s\n```\n\n",
			in.RegTest.Name, in.RegTest.Name, strings.TrimSpace(in.RegTest.Text))
		b.WriteString("<details><summary>The steps harp ran</summary>\n\n")
	}
	for i, s := range r.Steps {
		fmt.Fprintf(&b, "%d. %s\n", i+1, s)
	}
	if len(r.Steps) > 0 {
		b.WriteString("\n")
	}
	if short {
		b.WriteString("</details>\n\n")
		if _, ok := in.Repro["reproduce"]; ok {
			fmt.Fprintf(&b, "harp's longer standalone reproducer (sh, socat, checked against harp's verdicts): `harp findings repro %s --reports DIR --out DIR`.\n\n", f.ID)
		}
	} else if script, ok := in.Repro["reproduce"]; ok {
		b.WriteString("A standalone reproducer (no harp, Go or Docker needed): save the files and run `./reproduce /path/to/haproxy`; it prints REPRODUCED and exits 1 when the bug shows, PASS and 0 when not, INCONCLUSIVE and 2 when it could not tell.\n\n")
		names := make([]string, 0, len(in.Repro))
		for name := range in.Repro {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			if name == "README.md" || name == "verified.txt" {
				continue
			}
			fmt.Fprintf(&b, "<details><summary><code>%s</code></summary>\n\n```\n%s\n```\n</details>\n\n", name, fit(in.Repro[name], 12000))
		}
		if v, ok := in.Repro["verified.txt"]; ok {
			fmt.Fprintf(&b, "harp checked it against its own verdicts:\n\n```\n%s\n```\n\n", fit(v, 2500))
		}
		_ = script
	}
	fmt.Fprintf(&b, "With harp: `%s`\n\n", report.Reproduce(r))

	b.WriteString("### Do you have any idea what may have caused this?\n\n")
	b.WriteString(cause(in) + "\n\n")

	b.WriteString("### Do you have an idea how to solve the issue?\n\n")
	b.WriteString(fix(in) + "\n\n")

	// The short form folds the long evidence and keeps its head.
	block := func(summary, text string, lines, chars int) {
		text = strings.TrimSpace(text)
		if !short {
			fmt.Fprintf(&b, "```\n%s\n```\n\n", fit(text, chars))
			return
		}
		fmt.Fprintf(&b, "<details><summary>%s</summary>\n\n```\n%s\n```\n</details>\n\n", summary, firstLines(text, lines))
	}
	b.WriteString("### What is your configuration?\n\n")
	if r.Config != "" {
		block("the configuration harp ran", r.Config, 20, 8000)
	} else {
		b.WriteString("(not recorded)\n\n")
	}

	b.WriteString("### Output of `haproxy -vv`\n\n")
	block("haproxy -vv", r.VV, 6, 6000)

	b.WriteString("### Last Outputs and Backtraces\n\n")
	if short {
		fmt.Fprintf(&b, "<details><summary>harp's evidence</summary>\n\n%s\n</details>\n\n", closeFences(firstLines(outputs(f, r), 15)))
	} else {
		b.WriteString(outputs(f, r) + "\n\n")
	}

	b.WriteString("### Additional Information\n\n")
	fmt.Fprintf(&b, "- First seen %s (run `%s`, %s); last seen %s (run `%s`, %s).\n", f.FirstSeen.At.UTC().Format("2006-01-02"), f.FirstSeen.Run, f.FirstSeen.Build,
		f.LastSeen.At.UTC().Format("2006-01-02"), f.LastSeen.Run, f.LastSeen.Build)
	fmt.Fprintf(&b, "- Build spec `%s`, HAProxy %s", r.Build, r.Version)
	if r.Origin != "" {
		fmt.Fprintf(&b, " (%s)", r.Origin)
	}
	b.WriteString(".\n")
	if f.Status.State != findings.StateNew {
		fmt.Fprintf(&b, "- Status in harp's ledger: %s %s.\n", f.Status.State, f.Status.Ref)
	}
	out := b.String()
	if n := strings.Count(out, "\n"); short && n > MaxLines {
		// Never silently: the short form says where it stopped.
		lines := strings.SplitAfter(out, "\n")
		out = closeFences(strings.Join(lines[:MaxLines-4], ""))
		if open := strings.Count(out, "<details>") - strings.Count(out, "</details>"); open > 0 {
			out += "\n</details>"
		}
		out += fmt.Sprintf("\n\n(cut here: the long form, harp report --finding without --vtc, has the rest)\n")
	}
	if len(out) > MaxLen {
		out = out[:MaxLen-200]
		out = out[:strings.LastIndex(out, "\n")+1] + "\n(cut at GitHub's length limit: the evidence directories hold the rest)\n"
	}
	return out
}

// shortSuspects: the short form lists that many of a bisect's suspects.
const shortSuspects = 4

func cause(in Inputs) string {
	o := in.Bisect
	if o == nil {
		return "Not bisected yet (`harp bisect --finding " + in.Finding.ID + " --repo CLONE --good A --bad B`)."
	}
	var good, bad int
	for _, s := range o.Steps {
		switch s.Term {
		case "good":
			good++
		case "bad":
			bad++
		}
	}
	span := ""
	if len(o.Range) > 1 {
		span = fmt.Sprintf(" over %d commits (%s .. %s)", len(o.Range), o.Range[0].Label, o.Range[len(o.Range)-1].Label)
	}
	switch {
	case o.First != nil:
		return fmt.Sprintf("`harp bisect --finding` (this finding's own check as the oracle, not the whole suite)%s, %d steps (%d good, %d bad), names the first bad commit:\n\n    %s %s\n",
			span, len(o.Steps), good, bad, o.First.Commit, o.First.Subject)
	case len(o.Suspects) > 0:
		var ids []string
		for i, c := range o.Suspects {
			if in.RegTest != nil && i == shortSuspects && len(o.Suspects) > shortSuspects+1 {
				ids = append(ids, fmt.Sprintf("... and %d more (the long form lists them)", len(o.Suspects)-i))
				break
			}
			ids = append(ids, c.Label+" "+c.Subject)
		}
		return fmt.Sprintf("`harp bisect --finding`%s narrowed it to %d commits (skipped ones hide the boundary):\n\n    %s\n", span, len(o.Suspects), strings.Join(ids, "\n    "))
	}
	return fmt.Sprintf("`harp bisect --finding`%s found no boundary: %s", span, o.Unmet)
}

func fix(in Inputs) string {
	x := in.Fix
	if x == nil {
		return "No fix proposed yet."
	}
	patch := fit(strings.TrimSpace(x.Patch), 15000)
	if in.RegTest != nil {
		// The short form shows the code; the message (impact, cause,
		// backport) is the long form's and the series'.
		patch = firstLines(diffOnly(strings.TrimSpace(x.Patch)), 24)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "A proposed fix, `%s`:\n\n<details><summary>patch</summary>\n\n```diff\n%s\n```\n</details>\n\n", x.Name, patch)
	b.WriteString(proofTable(x.Proof, x.Name, in.Finding.Signature, in.RegTest != nil))
	return b.String()
}

// Proof is the table of a fix's proof run: each suite's verdict on the
// build without the patch and with it, and the finding's own verdict on
// both. The fix is proven when the finding is REPRODUCED without it and
// PASS with it, and no other suite's verdict moved.
func Proof(run report.Run, patch, sig string) string { return proofTable(run, patch, sig, false) }

// proofTable renders the proof; short keeps the finding's row and the suites
// that moved, and names the others in one line (the short form's budget
// is lines).
func proofTable(run report.Run, patch, sig string, short bool) string {
	// The pair is a build with the patch and the build with the same
	// spec less that patch: with several patches in the proof runs, the
	// comparison isolates this one.
	specs := map[string]bool{}
	for _, r := range run.Results {
		specs[r.Build] = true
	}
	var base, patched string
	for spec := range specs {
		if b, ok := withoutPatch(spec, patch); ok && specs[b] && (patched == "" || spec < patched) {
			base, patched = b, spec
		}
	}
	var without, with []report.Result
	for _, r := range run.Results {
		if r.IsCrashRow() || base == "" {
			continue
		}
		switch r.Build {
		case patched:
			with = append(with, r)
		case base:
			without = append(without, r)
		}
	}
	if len(with) == 0 || len(without) == 0 {
		return fmt.Sprintf("(the proof run %s does not hold a build with %s and the same build without it)\n", run.ID, patch)
	}
	by := func(rs []report.Result) map[string]report.Result {
		m := map[string]report.Result{}
		for _, r := range rs {
			m[r.Suite] = r
		}
		return m
	}
	a, p := by(without), by(with)
	var suites []string
	for s := range a {
		suites = append(suites, s)
	}
	sort.Strings(suites)
	var b strings.Builder
	fmt.Fprintf(&b, "Proof (harp run `%s`): `%s` without the patch and `%s` with it.\n\n", run.ID, without[0].Build, with[0].Build)
	b.WriteString("| | without | with |\n|---|---|---|\n")
	fv := func(r report.Result, ok bool) verdict.Verdict {
		if !ok {
			return "not run"
		}
		v, _ := findings.Verdict(r, sig)
		return v
	}
	suite := findings.SuiteOf(sig)
	ra, oka := a[suite]
	rp, okp := p[suite]
	fa, fp := fv(ra, oka), fv(rp, okp)
	fmt.Fprintf(&b, "| **finding `%s`** | **%s** | **%s** |\n", sig, fa, fp)
	moved := 0
	var still []string
	for _, s := range suites {
		x, y := a[s], p[s]
		yv := verdict.Verdict("not run")
		if yr, ok := p[s]; ok {
			yv = yr.Verdict
		}
		mark := ""
		if s != suite && x.Verdict != y.Verdict {
			mark = " (moved)"
			moved++
		}
		if short && mark == "" && s != suite {
			still = append(still, fmt.Sprintf("%s %s", s, x.Verdict))
			continue
		}
		fmt.Fprintf(&b, "| %s | %s | %s%s |\n", s, x.Verdict, yv, mark)
	}
	b.WriteString("\n")
	if len(still) > 0 {
		fmt.Fprintf(&b, "The same verdict without and with it (%d suites): %s.\n\n", len(still), strings.Join(still, ", "))
	}
	switch {
	case fa == verdict.Reproduced && fp == verdict.Pass && moved == 0:
		b.WriteString("The finding is REPRODUCED without the patch and PASS with it; no other suite's verdict moved.\n")
	case fa == verdict.Reproduced && fp == verdict.Pass:
		fmt.Fprintf(&b, "The finding is REPRODUCED without the patch and PASS with it, but %d other suite(s) moved: see the table.\n", moved)
	default:
		fmt.Fprintf(&b, "NOT PROVEN: the finding is %s without the patch and %s with it.\n", fa, fp)
	}
	return b.String()
}

func outputs(f findings.Finding, r report.Result) string {
	var b strings.Builder
	for _, c := range r.Crashes {
		if f.Kind == findings.KindCrash && findings.CrashSignature(c) != f.Signature {
			continue
		}
		fmt.Fprintf(&b, "The %s (pid %d) died: %s. Its last output:\n\n```\n%s\n```\n\n", c.ProcessKind(), c.PID, c.Signal, lastLines(c.LastLog, 16))
		if c.Backtrace != "" {
			fmt.Fprintf(&b, "Backtrace of all threads (gdb on the core):\n\n```\n%s\n```\n\n", fit(strings.TrimSpace(c.Backtrace), 12000))
		} else if c.Note != "" {
			fmt.Fprintf(&b, "(no backtrace: %s)\n\n", c.Note)
		}
		break
	}
	for _, t := range r.Trials {
		if !failedHere(t, f) {
			continue
		}
		fmt.Fprintf(&b, "%s %d: %s\n\n", verdict.Singular(r.Noun), t.N, t.Violation)
		if len(t.Notes) > 0 {
			b.WriteString("```\n" + fit(strings.Join(t.Notes, "\n"), 4000) + "\n```\n\n")
		}
		for _, blk := range t.Blocks {
			fmt.Fprintf(&b, "%s:\n\n```\n%s\n```\n\n", blk.Title, fit(strings.TrimSpace(blk.Text), 4000))
		}
		break
	}
	if b.Len() == 0 {
		return "(nothing recorded beyond the verdict)"
	}
	return strings.TrimSpace(b.String())
}

// failedHere says whether a trial shows the finding: its check failed
// there (a crash or property: any violated trial).
func failedHere(t verdict.Trial, f findings.Finding) bool {
	if f.Kind != findings.KindCheck {
		return t.Violation != ""
	}
	for _, c := range t.Checks {
		if c.ID == f.Check && !c.Held {
			return true
		}
	}
	return false
}

func builds(bs []findings.Build) string {
	var parts []string
	for _, b := range bs {
		parts = append(parts, fmt.Sprintf("HAProxy %s (`%s`)", b.Version, b.Spec))
	}
	return strings.Join(parts, ", ")
}

func orNone(s string) string {
	if s == "" {
		return "no build tested"
	}
	return s
}

// fit cuts s at a line boundary to at most n characters, saying so.
func fit(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := s[:n]
	if i := strings.LastIndex(cut, "\n"); i > n/2 {
		cut = cut[:i]
	}
	return cut + fmt.Sprintf("\n... (%d more characters in harp's evidence)", len(s)-len(cut))
}

// firstLines keeps the first n lines of s, saying how many more there are.
// diffOnly is a patch from its first diff on (its message left out); the
// whole patch when it has none.
func diffOnly(patch string) string {
	for _, mark := range []string{"\ndiff --git ", "\n--- "} {
		if i := strings.Index(patch, mark); i >= 0 {
			return patch[i+1:]
		}
	}
	return patch
}

func firstLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = append(lines[:n], fmt.Sprintf("... (%d more lines in harp's evidence)", len(lines)-n))
	}
	return strings.Join(lines, "\n")
}

// closeFences ends a code block that a cut left open.
func closeFences(s string) string {
	n := 0
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "```") {
			n++
		}
	}
	if n%2 == 1 {
		s += "\n```"
	}
	return s
}

// lastLines keeps a log's last n lines.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = append([]string{fmt.Sprintf("(%d earlier lines in harp's evidence)", len(lines)-n)}, lines[len(lines)-n:]...)
	}
	return fit(strings.Join(lines, "\n"), 4000)
}

// withoutPatch is a build spec less its patch=...name option; ok is false
// when the spec does not apply that patch.
func withoutPatch(spec, name string) (string, bool) {
	parts := strings.Split(spec, ",")
	for i, p := range parts {
		if v, isPatch := strings.CutPrefix(p, "patch="); isPatch && (v == name || strings.HasSuffix(v, "/"+name)) {
			return strings.Join(append(parts[:i:i], parts[i+1:]...), ","), true
		}
	}
	return "", false
}

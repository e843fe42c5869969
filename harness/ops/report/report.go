// Package report writes what a run found: reports/<run-id>/summary.json (one
// record per suite x build), report.md (ready to read or attach upstream)
// and per-result evidence, and points reports/latest at the run.
package report

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/harp-project/harp/harness/core/record"
	"github.com/harp-project/harp/harness/core/verdict"
)

// Result is one suite on one build.
type Result struct {
	Suite          string          `json:"suite"`
	Upstream       string          `json:"upstream_issue"`
	Title          string          `json:"title"`
	Build          string          `json:"build_spec"`
	Image          string          `json:"image,omitempty"`
	Origin         string          `json:"origin,omitempty"` // a git commit and subject, a tarball's URL and sha256
	Commit         string          `json:"commit,omitempty"` // a git: build's commit (a nightly's head moves)
	Version        string          `json:"haproxy_version"`
	Name           string          `json:"build_name"`
	Verdict        verdict.Verdict `json:"verdict"`
	TrialsRun      int             `json:"trials_run"`
	TrialsViolated int             `json:"trials_violated"`
	Reason         string          `json:"reason"`
	DurationS      float64         `json:"duration_s"`
	Evidence       string          `json:"evidence_dir,omitempty"` // under the run's directory
	// Lasting: inconclusive for a reason no rerun on this build can change.
	Lasting bool `json:"unmet_lasting,omitempty"`
	// Weak: what an inconclusive run still saw of the bug (verdict.WeakObservation).
	Weak string `json:"weak_observation,omitempty"`

	// Checks count each named check over the trials that decided
	// something (verdict.TallyChecks): what a findings ledger reads
	// without loading trials.
	Checks []verdict.Tally `json:"checks,omitempty"`

	Noun  string   `json:"trial_noun,omitempty"`
	Steps []string `json:"steps,omitempty"`
	// Kept in the evidence directory, not in summary.json (Load reads them back).
	VV     string          `json:"-"`
	Config string          `json:"-"`
	Trials []verdict.Trial `json:"-"`
	// Crashes are HAProxy processes that died on a signal (or wrote an ASan
	// report) during the run: a crash row holds every one of its build's.
	Crashes []verdict.Crash `json:"crashes,omitempty"`
	// CrashWatch is what the run's crash collection could check (nil: not
	// looked for, the suite never ran).
	CrashWatch *verdict.CrashWatch `json:"crash_watch,omitempty"`
}

// Line is the one verdict line a user reads.
func (r Result) Line() string {
	name := r.Name
	if name == "" {
		name = r.Build
	}
	line := fmt.Sprintf("#%s on %s: %s (%s)", r.Suite, name, r.Verdict, OneLine(r.Reason))
	if r.Weak != "" {
		line += "; weak observation, not a verdict: " + r.Weak
	}
	return line
}

// OneLine keeps a verdict line one line: a reason's first line, and a
// pointer to the report for the rest (a compile log, a node's last log
// lines).
func OneLine(reason string) string {
	first, rest, multi := strings.Cut(strings.TrimSpace(reason), "\n")
	if !multi || strings.TrimSpace(rest) == "" {
		return first
	}
	return strings.TrimSpace(first) + " [more in report.md]"
}

// Run is one harp invocation.
type Run struct {
	ID      string    `json:"run_id"`
	Started time.Time `json:"started"`
	Command string    `json:"command"`
	Harp    string    `json:"harp,omitempty"` // harp's version and commit
	// Shard ("i/n") and Cells (the whole matrix's count) let a merge tell
	// whether every shard is there.
	Shard string `json:"shard,omitempty"`
	Cells int    `json:"cells,omitempty"`
	// Matrix is the identity of the matrix a shard is of (see Identity).
	Matrix  *Identity `json:"matrix,omitempty"`
	Results []Result  `json:"results"`
	// Since and Changes compare with a previous run (make nightly).
	Since   string   `json:"since,omitempty"`
	Changes []Change `json:"changes,omitempty"`
	// FindingChanges are the same moves by finding (findings.Changes).
	FindingChanges []string `json:"finding_changes,omitempty"`
	// Notes are what the run could not do as asked and went on without
	// (a clone whose fetch failed: its heads were tested as they were).
	Notes []string `json:"notes,omitempty"`
}

// NewID makes a sortable run id.
// The random part keeps ids unique across pid namespaces (two harp
// processes in two containers may have the same pid).
func NewID() string {
	var b [3]byte
	rand.Read(b[:])
	return fmt.Sprintf("%s-%04x%x", time.Now().UTC().Format("20060102T150405Z"), os.Getpid()&0xffff, b)
}

// Write writes the run under root and points root/latest at it.
func Write(root string, run Run) (string, error) {
	dir := filepath.Join(root, run.ID)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	for i := range run.Results {
		r := &run.Results[i]
		r.Evidence = ""
		if r.Config != "" || r.VV != "" || len(r.Trials) > 0 || len(r.Crashes) > 0 {
			r.Evidence = fmt.Sprintf("%02d-%s", i+1, evidenceName(*r))
		}
	}
	for _, r := range run.Results {
		if r.Evidence == "" {
			continue // nothing to keep (merged from a shard without evidence)
		}
		ev := filepath.Join(dir, r.Evidence)
		if err := os.MkdirAll(ev, 0o755); err != nil {
			return "", err
		}
		trials, _ := json.MarshalIndent(r.Trials, "", "  ")
		files := []fullText{{"trials.json", string(trials) + "\n"}, {"haproxy.cfg", r.Config}, {"haproxy-vv.txt", r.VV}}
		// The full texts that report.md and report.html fold, named as
		// they link them (one result at a time: they may be large).
		files = append(files, fullTexts(r, showsCrashes(run.Results, r))...)
		for _, f := range files {
			if err := os.WriteFile(filepath.Join(ev, f.Name), []byte(f.Text), 0o644); err != nil {
				return "", err
			}
		}
	}
	// Not HTML-escaped: a crash signature (f <- g) and HAProxy's own
	// output (Proxy <HTTPCLIENT>) stay as they read, for grep and jq.
	var sum bytes.Buffer
	enc := json.NewEncoder(&sum)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(run); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "summary.json"), sum.Bytes(), 0o644); err != nil {
		return "", err
	}
	junit, err := JUnit(run)
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "junit.xml"), junit, 0o644); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "report.md"), []byte(Markdown(run)), 0o644); err != nil {
		return "", err
	}
	page, err := HTML(run)
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "report.html"), page, 0o644); err != nil {
		return "", err
	}
	latest := filepath.Join(root, "latest")
	os.Remove(latest)
	if err := os.Symlink(run.ID, latest); err != nil {
		return dir, err
	}
	return dir, nil
}

// LoadSummary reads a run's summary.json alone: results without their
// evidence (trials, configuration, -vv), for scanning many runs.
func LoadSummary(dir string) (Run, error) {
	var run Run
	data, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		return run, fmt.Errorf("%s is not a harp run directory: %w", dir, err)
	}
	if err := json.Unmarshal(data, &run); err != nil {
		return run, fmt.Errorf("%s/summary.json: %w", dir, err)
	}
	return run, nil
}

// Load reads a run directory written by Write back, evidence included
// (configuration, haproxy -vv and trials of every result whose evidence
// directory is there).
func Load(dir string) (Run, error) {
	run, err := LoadSummary(dir)
	if err != nil {
		return run, err
	}
	for i := range run.Results {
		r := &run.Results[i]
		if r.Evidence == "" {
			continue
		}
		ev := filepath.Join(dir, r.Evidence)
		if b, err := os.ReadFile(filepath.Join(ev, "trials.json")); err == nil {
			if err := json.Unmarshal(b, &r.Trials); err != nil {
				return run, fmt.Errorf("%s/trials.json: %w", ev, err)
			}
		}
		if b, err := os.ReadFile(filepath.Join(ev, "haproxy.cfg")); err == nil {
			r.Config = string(b)
		}
		if b, err := os.ReadFile(filepath.Join(ev, "haproxy-vv.txt")); err == nil {
			r.VV = string(b)
		}
	}
	return run, nil
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_.+-]`)

func evidenceName(r Result) string {
	name := r.Name
	if name == "" {
		name = r.Build
	}
	return unsafeName.ReplaceAllString(r.Suite+"-"+name, "_")
}

// Markdown renders the run as a report.
func Markdown(run Run) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# harp run %s\n\nStarted %s. Command: `%s`\n\n", run.ID, run.Started.UTC().Format(time.RFC3339), run.Command)
	b.WriteString(Matrix(run.Results, true) + "\n")
	for _, n := range run.Notes {
		fmt.Fprintf(&b, "> %s\n\n", n)
	}
	if run.Since != "" {
		fmt.Fprintf(&b, "Changes since %s: %d\n\n", run.Since, len(run.Changes))
		for _, c := range run.Changes {
			fmt.Fprintf(&b, "- %s\n", c)
		}
		b.WriteString("\n")
		if len(run.FindingChanges) > 0 {
			fmt.Fprintf(&b, "Findings that moved (harp findings): %d\n\n", len(run.FindingChanges))
			for _, c := range run.FindingChanges {
				fmt.Fprintf(&b, "- %s\n", c)
			}
			b.WriteString("\n")
		}
	}
	b.WriteString("| suite | upstream | build | verdict | trials | reason |\n|---|---|---|---|---|---|\n")
	for _, r := range run.Results {
		fmt.Fprintf(&b, "| #%s | %s | %s | **%s** | %d of %d violated | %s |\n", r.Suite, r.Upstream, r.Name, r.Verdict, r.TrialsViolated, r.TrialsRun, mdCell(r.Reason))
	}
	for _, s := range layout(run) {
		mdSection(&b, s)
	}
	return b.String()
}

// mdSection writes one result's section: its header lines, then (unless
// the report reached its budget) its evidence, folded.
func mdSection(b *strings.Builder, s section) {
	r := s.Result
	fmt.Fprintf(b, "\n## #%s on %s: %s\n\n", r.Suite, r.Name, r.Verdict)
	fmt.Fprintf(b, "%s: %s\n\n", r.Upstream, r.Title)
	fmt.Fprintf(b, "Reproduce with harp: `%s`\n\n", Reproduce(r))
	fmt.Fprintf(b, "- Build spec: `%s`\n", r.Build)
	if r.Origin != "" {
		fmt.Fprintf(b, "- Origin: %s\n", r.Origin)
	}
	fmt.Fprintf(b, "- HAProxy version: %s\n- Image: `%s`\n- Verdict: **%s** (%s)\n- Trials: %d run, %d violated the expectation\n- Duration: %.1f s\n- Evidence: `%s/`\n\n",
		r.Version, r.Image, r.Verdict, r.Reason, r.TrialsRun, r.TrialsViolated, r.DurationS, r.Evidence)
	if r.Lasting {
		b.WriteString("The unmet precondition lasts: it is this build's own behaviour, so the run stopped there and a rerun would say the same.\n\n")
	}
	if r.Weak != "" {
		fmt.Fprintf(b, "Weak observation (not a verdict; a bisect may use it): %s\n\n", r.Weak)
	}
	if s.Brief {
		fmt.Fprintf(b, "%s\n\n", mdLinked(briefNote(), r.Evidence, "/"))
		return
	}
	if r.VV != "" {
		b.WriteString("<details><summary>haproxy -vv</summary>\n\n")
		mdFold(b, s.VV)
		b.WriteString("</details>\n\n")
	}
	if r.Config != "" {
		b.WriteString("<details><summary>Configuration</summary>\n\n")
		mdFold(b, s.Config)
		b.WriteString("</details>\n\n")
	}
	for _, c := range s.Crashes {
		b.WriteString(crashLead(c.Crash) + "\n\n")
		b.WriteString("<details><summary>Last log lines</summary>\n\n")
		mdFold(b, c.Log)
		b.WriteString("</details>\n\n")
		if c.ASan.Total > 0 {
			fmt.Fprintf(b, "<details open><summary>AddressSanitizer report: %s</summary>\n\n", c.ASanSummary)
			mdFold(b, c.ASan)
			b.WriteString("</details>\n\n")
		}
		if c.Trace.Total > 0 {
			b.WriteString("<details><summary>" + backtraceSummary + "</summary>\n\n")
			mdFold(b, c.Trace)
			b.WriteString("</details>\n\n")
		}
	}
	if s.MoreCrashes > 0 {
		fmt.Fprintf(b, "%s\n\n", moreCrashesNote(s.MoreCrashes, s.Budget))
	}
	if s.CrashNote != "" {
		// The build's crash row holds the evidence.
		fmt.Fprintf(b, "**Crashes** (evidence in the crash row of %s): %s\n\n", r.Name, s.CrashNote)
	}
	if len(r.Steps) > 0 {
		b.WriteString("Steps:\n\n")
		for _, st := range r.Steps {
			fmt.Fprintf(b, "1. %s\n", st)
		}
		b.WriteString("\n")
	}
	for _, t := range s.Trials {
		fmt.Fprintf(b, "### %s %d: %s (%.1f s)\n\n", verdict.Singular(r.Noun), t.N, t.State, t.Duration.Seconds())
		for _, n := range t.Notes.Head {
			fmt.Fprintf(b, "- %s\n", n)
		}
		if t.Notes.IsFolded() {
			fmt.Fprintf(b, "- %s\n", mdFoldNote(t.Notes))
			for _, n := range t.Notes.Tail {
				fmt.Fprintf(b, "- %s\n", n)
			}
		}
		for _, blk := range t.Blocks {
			fmt.Fprintf(b, "\n%s:\n\n", blk.Title)
			mdFold(b, blk.Text)
		}
		if t.Transcript.Total > 0 {
			b.WriteString("\n<details><summary>Runtime transcript (polls folded)</summary>\n\n")
			mdFold(b, t.Transcript)
			b.WriteString("</details>\n")
		}
		b.WriteString("\n")
	}
	if len(s.Summary) > 0 || s.MoreTrials > 0 {
		fmt.Fprintf(b, "%s\n\n", mdLinked(summaryNote(s), r.Evidence, "/trials.json"))
		for _, l := range s.Summary {
			fmt.Fprintf(b, "- %s\n", l)
		}
		if s.MoreTrials > 0 {
			fmt.Fprintf(b, "- ... and %d more %s\n", s.MoreTrials, noun(r))
		}
		b.WriteString("\n")
	}
}

// mdFold writes a folded text as code blocks: its head, the fold note
// with a link to the full text, its tail.
func mdFold(b *strings.Builder, f fold) {
	fmt.Fprintf(b, "```\n%s\n```\n", f.HeadText())
	if !f.IsFolded() {
		return
	}
	fmt.Fprintf(b, "\n%s\n", mdFoldNote(f))
	if len(f.Tail) > 0 {
		fmt.Fprintf(b, "\n```\n%s\n```\n", f.TailText())
	}
}

func mdFoldNote(f fold) string {
	if f.File == "" {
		return f.Note()
	}
	return fmt.Sprintf("%s: full text in [%s](%s)", f.Lead(), f.File, f.File)
}

// mdLinked ends a note with a link to a result's evidence (dir + suffix),
// or says there is none.
func mdLinked(note, dir, suffix string) string {
	if dir == "" {
		return note + ": no evidence directory was kept."
	}
	return fmt.Sprintf("%s: [%s%s](%s%s)", note, dir, suffix, dir, suffix)
}

// briefNote, summaryNote and moreCrashesNote say what the budgets cut.
func briefNote() string {
	return fmt.Sprintf("Details not shown: this report reached its %d MiB budget before this section. Its full evidence (trials.json, the configuration, haproxy -vv and the full texts) is in", RunBudget>>20)
}

func summaryNote(s section) string {
	first := len(s.Trials) + 1
	if len(s.Result.Trials) >= first {
		first = s.Result.Trials[len(s.Trials)].N
	}
	one := verdict.Singular(noun(s.Result))
	return fmt.Sprintf("This section reached its budget (%d KiB): from %s %d on, each %s in one line; every one in full in",
		s.Budget>>10, one, first, one)
}

func moreCrashesNote(n, budget int) string {
	return fmt.Sprintf("**%d more crashes** not shown: this section reached its budget (%d KiB); every one is in summary.json.", n, budget>>10)
}

// Trim folds polling out of a transcript: `show proc` polls are dropped and
// a run of the same command keeps only its last answer.
func Trim(ex []record.Exchange) []record.Exchange {
	var out []record.Exchange
	for _, e := range ex {
		if e.Command == "show proc" {
			continue
		}
		if len(out) > 0 && out[len(out)-1].Command == e.Command && out[len(out)-1].Target == e.Target {
			out[len(out)-1] = e
			continue
		}
		out = append(out, e)
	}
	return out
}

func mdCell(s string) string { return strings.ReplaceAll(s, "|", "\\|") }

// CrashMarkdown shows each crash as a maintainer asks for it: the signal,
// the last log lines, the backtrace of every thread; limit (0: none) cuts
// each block at line boundaries.
func CrashMarkdown(cs []verdict.Crash, limit int) string {
	var b strings.Builder
	for _, c := range cs {
		b.WriteString(crashLead(c) + "\n\n")
		log, bt := strings.TrimSpace(c.LastLog), strings.TrimSpace(c.Backtrace)
		if limit > 0 {
			log, bt = fitLines(log, limit/3), fitLines(bt, 2*limit/3)
		}
		fmt.Fprintf(&b, "<details><summary>Last log lines</summary>\n\n```\n%s\n```\n</details>\n\n", log)
		if a := strings.TrimSpace(c.ASan); a != "" {
			if limit > 0 {
				a = fitLines(a, limit/3)
			}
			fmt.Fprintf(&b, "<details open><summary>AddressSanitizer report: %s</summary>\n\n```\n%s\n```\n</details>\n\n", c.ASanSummary, a)
		}
		if bt != "" {
			fmt.Fprintf(&b, "<details><summary>%s</summary>\n\n```\n%s\n```\n</details>\n\n", backtraceSummary, bt)
		}
	}
	return b.String()
}

const backtraceSummary = "Backtrace: the crashing thread, then every thread (gdb: bt full; thread apply all bt full)"

// crashLead is a crash's first line: which process died how, met by which
// suite, its signature.
func crashLead(c verdict.Crash) string {
	s := fmt.Sprintf("**Crash**: %s %d of %s exited with code %d (%s).", c.ProcessKind(), c.PID, c.Node, c.Code, c.Signal)
	if c.Suite != "" {
		s += fmt.Sprintf(" Met by #%s.", c.Suite)
	}
	if c.Signature != "" {
		s += fmt.Sprintf(" Signature: `%s`.", c.Signature)
	}
	if c.Note != "" {
		s += fmt.Sprintf(" %s.", upperFirst(strings.TrimSuffix(c.Note, ".")))
	}
	return s
}

// Reproduce is the command that runs a result again: its suite, or for a
// crash row the suites whose runs met a crash (all of them when none did).
func Reproduce(r Result) string {
	if !r.IsCrashRow() {
		return fmt.Sprintf("make test-%s HAPROXY='%s'", r.Suite, r.Build)
	}
	seen := map[string]bool{}
	var labels []string
	for _, c := range r.Crashes {
		if c.Suite != "" && !seen[c.Suite] {
			seen[c.Suite] = true
			labels = append(labels, "suite:"+c.Suite)
		}
	}
	if len(labels) == 0 {
		return fmt.Sprintf("bin/harp run --haproxy '%s'", r.Build)
	}
	return fmt.Sprintf("bin/harp run --suites '%s' --haproxy '%s'", strings.Join(labels, " || "), r.Build)
}

// hasCrashRow says whether the run holds the crash row of r's build.
func hasCrashRow(results []Result, r Result) bool {
	for _, o := range results {
		if o.IsCrashRow() && o.Build == r.Build && o.Name == r.Name {
			return true
		}
	}
	return false
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// fitLines keeps the first whole lines of s that fit in n bytes.
func fitLines(s string, n int) string {
	if len(s) <= n {
		return s
	}
	lines := strings.Split(s, "\n")
	size, keep := 0, 0
	for keep < len(lines) && size+len(lines[keep])+1 <= n-80 {
		size += len(lines[keep]) + 1
		keep++
	}
	return strings.Join(lines[:keep], "\n") + fmt.Sprintf("\n[cut: %d more lines in summary.json]", len(lines)-keep)
}

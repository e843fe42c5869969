package report

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/harp-project/harp/harness/core/record"
	"github.com/harp-project/harp/harness/core/verdict"
)

// report.md and report.html stay readable whatever a suite records (300
// tables polled for a minute is 700,000 lines of transcript): long texts
// fold to their first and last lines, with the full text in the result's
// evidence directory, and each result's section and the whole report have
// a budget. The matrix and the summary table at the top are never cut.
const (
	// CellBudget bounds one result's section (about; estimated as HTML).
	CellBudget = 1 << 20
	// RunBudget bounds every section together (the tables at the top aside).
	RunBudget = 4 << 20

	// FoldHead and FoldTail are the lines a folded text keeps.
	FoldHead, FoldTail = 40, 40
	// A text of more lines (or bytes) than this folds.
	foldLines, foldBytes = 100, 64 << 10
	// A shown line of a folded text is cut at this many bytes.
	maxShownLine = 2000
	// minSection is the least budget worth a section's details.
	minSection = 16 << 10
)

// fold is a text (or list) as a report shows it: whole, or its first and
// last lines with a note between saying how much was folded and which
// file holds all of it.
type fold struct {
	Head, Tail []string
	Total      int    // lines (or items) in the full text
	Folded     int    // lines (or items) not shown
	Cut        bool   // some shown lines were shortened
	Noun       string // what Folded counts: lines, notes
	File       string // the full text, relative to the run directory ("" when no evidence directory keeps it)
	cost       int
}

// IsFolded says whether the report shows less than the whole text.
func (f fold) IsFolded() bool { return f.Folded > 0 || f.Cut }

// Lead is the fold note without its file: "... 12000 lines folded".
func (f fold) Lead() string {
	what := fmt.Sprintf("%d %s folded", f.Folded, f.Noun)
	switch {
	case f.Folded == 0:
		what = "long lines cut"
	case f.Cut:
		what += ", long lines cut"
	}
	return "... " + what
}

// Note is the whole fold note, as plain text.
func (f fold) Note() string {
	if f.File == "" {
		return f.Lead() + " (no evidence directory keeps the full text)"
	}
	return f.Lead() + ": full text in " + f.File
}

// HeadText and TailText are the shown lines of a text.
func (f fold) HeadText() string { return strings.Join(f.Head, "\n") }
func (f fold) TailText() string { return strings.Join(f.Tail, "\n") }

// foldText folds s (its lines) when it is too long to show whole; file
// (relative to the run directory) names where its full text is kept.
func foldText(s, file string) fold {
	f := fold{Noun: "lines", File: file}
	if s == "" {
		return f
	}
	f.Total = strings.Count(s, "\n") + 1
	if f.Total <= foldLines && len(s) <= foldBytes {
		f.Head = []string{s}
		f.cost = htmlLen(s)
		return f
	}
	// Only the shown lines are split out: the text may be 60 MB.
	rest := s
	for len(f.Head) < FoldHead && len(f.Head) < f.Total {
		line, after, _ := strings.Cut(rest, "\n")
		f.Head = append(f.Head, line)
		rest = after
	}
	tail := min(FoldTail, f.Total-len(f.Head))
	end := len(s)
	for range tail {
		i := strings.LastIndexByte(s[:end], '\n')
		f.Tail = append([]string{s[i+1 : end]}, f.Tail...)
		end = max(i, 0)
	}
	f.Folded = f.Total - len(f.Head) - len(f.Tail)
	f.capLines()
	return f
}

// foldItems folds a list (a trial's notes) the same way.
func foldItems(items []string, file string) fold {
	f := fold{Noun: "notes", File: file, Total: len(items)}
	size := 0
	for _, it := range items {
		size += len(it) + 1
	}
	if len(items) <= foldLines && size <= foldBytes {
		f.Head = items
		for _, it := range items {
			f.cost += htmlLen(it) + 12
		}
		return f
	}
	h := min(FoldHead, len(items))
	t := min(FoldTail, len(items)-h)
	f.Head = append([]string(nil), items[:h]...)
	f.Tail = append([]string(nil), items[len(items)-t:]...)
	f.Folded = len(items) - h - t
	f.capLines()
	return f
}

// capLines cuts the shown lines of a folded text to maxShownLine bytes
// (on a character boundary) and counts what they cost.
func (f *fold) capLines() {
	for _, lines := range [][]string{f.Head, f.Tail} {
		for i, l := range lines {
			if len(l) > maxShownLine {
				cut := maxShownLine
				for cut > 0 && !utf8.RuneStart(l[cut]) {
					cut--
				}
				lines[i] = l[:cut] + fmt.Sprintf(" [%d bytes cut]", len(l)-cut)
				f.Cut = true
			}
			f.cost += htmlLen(lines[i]) + 12
		}
	}
	f.cost += 300 // the note and its link
}

// htmlLen is the length of s once HTML-escaped (html/template escapes
// these), which is never less than its Markdown.
func htmlLen(s string) int {
	n := len(s)
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '<', '>':
			n += 3
		case '&', '"', '\'', '+':
			n += 4
		}
	}
	return n
}

// section is one result's part of report.md and report.html, laid out
// within the budgets; Markdown and HTML render the same sections.
type section struct {
	Result
	// Brief: the report reached RunBudget before this section, which
	// keeps its header lines and a pointer to its evidence directory.
	Brief bool
	// Budget is what this section could use (CellBudget or less).
	Budget    int
	VV        fold
	Config    fold
	CrashNote string // what crashed, when the build's crash row shows it
	Crashes   []crashFold
	// MoreCrashes are crashes past the budget (every one is in summary.json).
	MoreCrashes int
	Trials      []trialFold
	// Summary: one line per trial past the budget (all in trials.json);
	// MoreTrials are those past even that.
	Summary    []string
	MoreTrials int
}

type crashFold struct {
	verdict.Crash
	Log, ASan, Trace fold
}

type trialFold struct {
	N          int
	Duration   time.Duration
	State      string
	Class      string
	Remark     string
	Notes      fold
	Blocks     []blockFold
	Transcript fold
}

type blockFold struct {
	Title string
	Text  fold
}

// fullText is a file of a result's evidence directory holding a text
// its section folds.
type fullText struct{ Name, Text string }

// trialState is what a trial's heading says: held, VIOLATED: ...,
// inconclusive: ..., and its CSS class.
func trialState(t verdict.Trial) (state, class string) {
	switch {
	case t.Violation != "":
		return "VIOLATED: " + t.Violation, "t-violated"
	case t.Unmet != "":
		state = "inconclusive: " + t.Unmet
		if t.Weak != "" {
			state += " (weak observation: " + t.Weak + ")"
		}
		return state, "t-unmet"
	}
	return "held", "t-held"
}

// TranscriptText is a trial's runtime transcript as the reports show it
// (polls folded by Trim): one line per exchange, then its answer.
func TranscriptText(ex []record.Exchange) string {
	var b strings.Builder
	for _, e := range Trim(ex) {
		fmt.Fprintf(&b, "%s %s> %s\n", e.At.UTC().Format("15:04:05.000"), e.Target, e.Command)
		if e.Err != "" {
			fmt.Fprintf(&b, "(error: %s)\n", e.Err)
		}
		if out := strings.TrimRight(e.Output, "\n"); out != "" {
			b.WriteString(out + "\n")
		}
	}
	return b.String()
}

// fileNames are the names of a result's full-text files, one per text
// that may fold, unique within its evidence directory: crash-01-log.txt,
// trial-03-transcript.txt, trial-03-<block title>.txt.
type fileNames struct {
	crashes [][3]string // log, asan, backtrace
	trials  []trialNames
}

type trialNames struct {
	notes, transcript string
	blocks            []string
}

func namesOf(r Result, showCrashes bool) fileNames {
	taken := map[string]bool{"trials.json": true, "haproxy.cfg": true, "haproxy-vv.txt": true}
	take := func(base string) string {
		name := base + ".txt"
		for k := 2; taken[name]; k++ {
			name = fmt.Sprintf("%s-%d.txt", base, k)
		}
		taken[name] = true
		return name
	}
	var n fileNames
	if showCrashes {
		for i := range r.Crashes {
			base := fmt.Sprintf("crash-%02d-", i+1)
			n.crashes = append(n.crashes, [3]string{take(base + "log"), take(base + "asan"), take(base + "backtrace")})
		}
	}
	for _, t := range r.Trials {
		base := fmt.Sprintf("trial-%02d-", t.N)
		// Taken first, so that a block titled "notes" or "transcript"
		// does not take their names.
		tn := trialNames{notes: take(base + "notes"), transcript: take(base + "transcript")}
		for _, b := range t.Blocks {
			tn.blocks = append(tn.blocks, take(base+slug(b.Title)))
		}
		n.trials = append(n.trials, tn)
	}
	return n
}

var nonSlug = regexp.MustCompile(`[^a-z0-9]+`)

// slug is a block title as part of a file name.
func slug(title string) string {
	s := strings.Trim(nonSlug.ReplaceAllString(strings.ToLower(title), "-"), "-")
	if len(s) > 40 {
		s = strings.TrimRight(s[:40], "-")
	}
	if s == "" {
		s = "block"
	}
	return s
}

// layout lays every result's section out within the budgets, in order:
// a section gets CellBudget or what is left of RunBudget, and once too
// little is left the later sections keep their header lines only. Pure
// and deterministic: the full-text files (fullTexts, written by Write) are
// named from the result alone.
func layout(run Run) []section {
	out := make([]section, len(run.Results))
	used := 0
	// The budget goes to what a maintainer reads first: REPRODUCED cells
	// (crash rows among them), then ERROR and INCONCLUSIVE, then PASS;
	// sections keep their places.
	order := make([]int, len(run.Results))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		return readFirst(run.Results[order[a]].Verdict) < readFirst(run.Results[order[b]].Verdict)
	})
	for _, i := range order {
		r := run.Results[i]
		s := section{Result: r}
		showCrashes := showsCrashes(run.Results, r)
		if !showCrashes && len(r.Crashes) > 0 {
			s.CrashNote = verdict.CrashGroups(r.Crashes, false)
		}
		cost := 1500 + 2*htmlLen(r.Reason) + htmlLen(r.Title) + htmlLen(r.Origin) + htmlLen(s.CrashNote)
		for _, st := range r.Steps {
			cost += htmlLen(st) + 12
		}
		left := RunBudget - used
		if left-cost < minSection {
			s.Brief = true
			out[i] = s
			used += cost
			continue
		}
		s.Budget = min(CellBudget, left)
		ev := func(name string) string {
			if r.Evidence == "" {
				return ""
			}
			return r.Evidence + "/" + name
		}
		nm := namesOf(r, showCrashes)
		s.VV = foldText(strings.TrimSpace(r.VV), ev("haproxy-vv.txt"))
		s.Config = foldText(strings.TrimSpace(r.Config), ev("haproxy.cfg"))
		cost += s.VV.cost + s.Config.cost
		// Details use at most 7/8 of the budget: the rest is for the one
		// line each of what did not fit.
		detail := s.Budget * 7 / 8
		if showCrashes {
			for ci, c := range r.Crashes {
				cf := crashFold{Crash: c}
				cn := nm.crashes[ci]
				cf.Log = foldText(strings.TrimSpace(c.LastLog), ev(cn[0]))
				cf.ASan = foldText(strings.TrimSpace(c.ASan), ev(cn[1]))
				cf.Trace = foldText(strings.TrimSpace(c.Backtrace), ev(cn[2]))
				c := 600 + htmlLen(c.Note) + htmlLen(c.Signature) + cf.Log.cost + cf.ASan.cost + cf.Trace.cost
				if s.MoreCrashes > 0 || cost+c > detail {
					s.MoreCrashes++
					continue
				}
				cost += c
				s.Crashes = append(s.Crashes, cf)
			}
		}
		noun := verdict.Singular(r.Noun)
		if noun == "" {
			noun = "trial"
		}
		for ti, t := range r.Trials {
			if len(s.Summary) == 0 && s.MoreTrials == 0 {
				if tf, c := foldTrial(t, nm.trials[ti], ev); cost+c <= detail {
					cost += c
					s.Trials = append(s.Trials, tf)
					continue
				}
			}
			// Past the budget: one line each, every later trial too.
			state, _ := trialState(t)
			line := fmt.Sprintf("%s %d: %s (%.1f s)", noun, t.N, state, t.Duration.Seconds())
			if len(line) > 300 {
				line = capLine(line, 300)
			}
			if s.MoreTrials == 0 && cost+htmlLen(line)+20 <= s.Budget {
				cost += htmlLen(line) + 20
				s.Summary = append(s.Summary, line)
				continue
			}
			s.MoreTrials++
		}
		used += cost
		out[i] = s
	}
	return out
}

// foldTrial folds one trial's notes, blocks and transcript and says
// about what they cost.
func foldTrial(t verdict.Trial, nm trialNames, ev func(string) string) (trialFold, int) {
	tf := trialFold{N: t.N, Duration: t.Duration, Remark: t.Remark}
	tf.State, tf.Class = trialState(t)
	tf.Notes = foldItems(t.Notes, ev(nm.notes))
	cost := 400 + htmlLen(tf.State) + htmlLen(t.Remark) + tf.Notes.cost
	for bi, b := range t.Blocks {
		bf := blockFold{Title: b.Title, Text: foldText(strings.TrimRight(b.Text, "\n"), ev(nm.blocks[bi]))}
		cost += 100 + htmlLen(b.Title) + bf.Text.cost
		tf.Blocks = append(tf.Blocks, bf)
	}
	if len(t.Exchanges) > 0 {
		tf.Transcript = foldText(strings.TrimRight(TranscriptText(t.Exchanges), "\n"), ev(nm.transcript))
		cost += 200 + tf.Transcript.cost
	}
	return tf, cost
}

// showsCrashes says whether r's section shows its crashes: a crash row
// does, and a suite's result when its build has no crash row.
func showsCrashes(results []Result, r Result) bool {
	return r.IsCrashRow() || !hasCrashRow(results, r)
}

// fullTexts are the files a result's folds point to: every text of it
// that folds (whether its trial is shown, summarized or cut).
func fullTexts(r Result, showCrashes bool) []fullText {
	if r.Evidence == "" {
		return nil
	}
	var out []fullText
	add := func(name, text string, f fold) {
		if f.IsFolded() {
			out = append(out, fullText{Name: name, Text: text + "\n"})
		}
	}
	nm := namesOf(r, showCrashes)
	for ci, c := range nm.crashes {
		cr := r.Crashes[ci]
		for k, text := range []string{cr.LastLog, cr.ASan, cr.Backtrace} {
			text = strings.TrimSpace(text)
			add(c[k], text, foldText(text, ""))
		}
	}
	for ti, t := range r.Trials {
		tn := nm.trials[ti]
		add(tn.notes, strings.Join(t.Notes, "\n"), foldItems(t.Notes, ""))
		for bi, b := range t.Blocks {
			text := strings.TrimRight(b.Text, "\n")
			add(tn.blocks[bi], text, foldText(text, ""))
		}
		if len(t.Exchanges) > 0 {
			text := strings.TrimRight(TranscriptText(t.Exchanges), "\n")
			add(tn.transcript, text, foldText(text, ""))
		}
	}
	return out
}

// capLine cuts s to about n bytes on a character boundary.
func capLine(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}

// readFirst ranks verdicts for the report's budget.
func readFirst(v verdict.Verdict) int {
	switch v {
	case verdict.Reproduced:
		return 0
	case verdict.Error:
		return 1
	case verdict.Inconclusive:
		return 2
	}
	return 3
}

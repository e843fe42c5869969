package report

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/harp-project/harp/harness/core/record"
	"github.com/harp-project/harp/harness/core/verdict"
)

func numbered(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func TestFoldText(t *testing.T) {
	if f := foldText(numbered(100), "ev/x.txt"); f.IsFolded() || f.HeadText() != numbered(100) || f.Total != 100 {
		t.Errorf("100 lines are shown whole: %+v", f)
	}
	f := foldText(numbered(1000), "ev/x.txt")
	if !f.IsFolded() || len(f.Head) != FoldHead || len(f.Tail) != FoldTail || f.Folded != 920 || f.Total != 1000 {
		t.Fatalf("1000 lines: %d head, %d tail, %d folded", len(f.Head), len(f.Tail), f.Folded)
	}
	if f.Head[0] != "line 1" || f.Head[39] != "line 40" || f.Tail[0] != "line 961" || f.Tail[39] != "line 1000" {
		t.Errorf("head %q..%q, tail %q..%q", f.Head[0], f.Head[39], f.Tail[0], f.Tail[39])
	}
	if f.Note() != "... 920 lines folded: full text in ev/x.txt" {
		t.Errorf("note %q", f.Note())
	}
	if f := foldText(numbered(1000), ""); !strings.Contains(f.Note(), "no evidence directory") {
		t.Errorf("no evidence dir: %q", f.Note())
	}
	// A few huge lines: shown cut (on a character boundary), never whole.
	long := strings.Repeat("é", 50000)
	f = foldText(long+"\n"+long, "ev/y.txt")
	if !f.IsFolded() || f.Folded != 0 || !f.Cut || len(f.HeadText()) > 2*maxShownLine+100 || !strings.Contains(f.Note(), "long lines cut") {
		t.Errorf("huge lines: folded %d, cut %v, %d bytes shown, %q", f.Folded, f.Cut, len(f.HeadText())+len(f.TailText()), f.Note())
	}
	if !strings.HasPrefix(f.Head[0], strings.Repeat("é", maxShownLine/2)+" [") {
		t.Errorf("cut mid-character: %q", f.Head[0][maxShownLine-4:])
	}
	if n := foldItems(make([]string, 1000), "ev/n.txt"); n.Folded != 920 || n.Noun != "notes" {
		t.Errorf("1000 notes: %+v", n.Folded)
	}
}

func TestFileNames(t *testing.T) {
	r := Result{Evidence: "01-x", Crashes: []verdict.Crash{{}}, Trials: []verdict.Trial{
		{N: 3, Blocks: []verdict.Block{{Title: "show peers (A)"}, {Title: "Show peers: A"}, {Title: "transcript"}, {Title: "§"}}},
	}}
	n := namesOf(r, true)
	if n.crashes[0] != [3]string{"crash-01-log.txt", "crash-01-asan.txt", "crash-01-backtrace.txt"} {
		t.Errorf("crash files %v", n.crashes[0])
	}
	tn := n.trials[0]
	want := []string{"trial-03-show-peers-a.txt", "trial-03-show-peers-a-2.txt", "trial-03-transcript-2.txt", "trial-03-block.txt"}
	if tn.notes != "trial-03-notes.txt" || tn.transcript != "trial-03-transcript.txt" || fmt.Sprint(tn.blocks) != fmt.Sprint(want) {
		t.Errorf("trial files %+v", tn)
	}
	if n := namesOf(r, false); len(n.crashes) != 0 {
		t.Error("crashes shown by the crash row get no files here")
	}
}

// manyTablesCell is conf-many-tables on 2.6.12 as it records itself: two
// nodes' `show peers` of 300 tables polled for a minute, about 240,000
// lines of transcript per check.
func manyTablesCell(i int) Result {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var peers strings.Builder
	peers.WriteString("0x55d: [02/Jan/2026:03:04:05] id=cluster disabled=0 flags=0x0 resync_timeout=<PAST> task_calls=1\n")
	for tb := 1; tb <= 300; tb++ {
		fmt.Fprintf(&peers, "  shared tables:\n    0x55e local_id=%d remote_id=0 flags=0x0 remote_data=0x0\n", tb)
		fmt.Fprintf(&peers, "    last_acked=0 last_pushed=0 last_get=0 teaching_origin=0 update=0\n    table:0x55f id=cluster/t%04d update=0 localupdate=0 commitupdate=0 refcnt=1\n", tb)
	}
	r := Result{Suite: "conf-many-tables", Upstream: "conformance: peers sections with hundreds of tables", Title: "many tables",
		Build: "deb:bookworm", Name: fmt.Sprintf("2.6.12-1+deb12u4-%d", i), Version: "2.6.12-1+deb12u4", Verdict: verdict.Reproduced,
		TrialsRun: 3, TrialsViolated: 1, Noun: "checks", Reason: "initial resync: with 300 tables the nodes did not mesh",
		VV: "HAProxy version 2.6.12-1+deb12u4\n", Config: "global\n" + strings.Repeat("  table t0001 type string len 32 size 1k expire 1h store gpc0\n", 300)}
	for n := 1; n <= 3; n++ {
		tr := verdict.Trial{N: n, Duration: time.Minute, Notes: []string{"initial resync"}}
		if n == 1 {
			tr.Violation = "initial resync: with 300 tables the nodes did not mesh"
		}
		for k := 0; k < 200; k++ {
			target := []string{"node1 worker 8", "node2 worker 9"}[k%2]
			tr.Exchanges = append(tr.Exchanges, record.Exchange{At: at.Add(time.Duration(k) * 300 * time.Millisecond), Target: target, Command: "@!8 show peers cluster", Output: peers.String()})
		}
		tr.Blocks = []verdict.Block{{Title: "show peers on A", Text: peers.String()}}
		r.Trials = append(r.Trials, tr)
	}
	return r
}

// sections splits a report into its result sections (after the tables).
func sections(t *testing.T, page, sep string) (top string, secs []string) {
	t.Helper()
	parts := strings.Split(page, sep)
	return parts[0], parts[1:]
}

// checkBounds asserts the sizes of report.md and report.html in dir and
// that every relative link in them names a file or directory there.
func checkBounds(t *testing.T, dir string, cells int) {
	t.Helper()
	for _, name := range []string{"report.md", "report.html"} {
		page, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		sep := "\n## #"
		if name == "report.html" {
			sep = "<section id="
		}
		top, secs := sections(t, string(page), sep)
		if len(secs) != cells {
			t.Errorf("%s: %d sections, want %d", name, len(secs), cells)
		}
		rest := 0
		for i, s := range secs {
			if len(s) > CellBudget+32<<10 {
				t.Errorf("%s: section %d is %d bytes, over the %d budget", name, i+1, len(s), CellBudget)
			}
			rest += len(s)
		}
		if rest > RunBudget+cells*4<<10 {
			t.Errorf("%s: sections are %d bytes, over the %d budget", name, rest, RunBudget)
		}
		if len(top) > 64<<10+cells*1<<10 {
			t.Errorf("%s: the tables at the top are %d bytes", name, len(top))
		}
		links := regexp.MustCompile(`\]\(([^)#:]+)\)|href="([^"#:]+)"`).FindAllStringSubmatch(string(page), -1)
		for _, m := range links {
			target := strings.ReplaceAll(m[1]+m[2], "&#43;", "+")
			if _, err := os.Stat(filepath.Join(dir, target)); err != nil {
				t.Errorf("%s links to %s: %v", name, target, err)
			}
		}
	}
}

// The issue's case: four cells, one of them 300 tables polled (720,000
// lines of transcript): report.md and report.html stay small, the
// transcripts fold, and the evidence keeps every line.
func TestManyTablesReportFits(t *testing.T) {
	big := manyTablesCell(1)
	run := Run{ID: "r", Started: time.Unix(0, 0), Results: []Result{big, htmlSample().Results[0], htmlSample().Results[2], htmlSample().Results[3]}}
	lines := 0
	for _, tr := range big.Trials {
		lines += strings.Count(TranscriptText(tr.Exchanges), "\n")
	}
	if lines < 700000 {
		t.Fatalf("the sample has %d lines of transcript", lines)
	}
	dir, err := Write(t.TempDir(), run)
	if err != nil {
		t.Fatal(err)
	}
	checkBounds(t, dir, 4)
	md, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	page, _ := os.ReadFile(filepath.Join(dir, "report.html"))
	if len(md) > 512<<10 || len(page) > 512<<10 {
		t.Errorf("folded, the issue's run is %d bytes of report.md and %d of report.html", len(md), len(page))
	}
	ev := filepath.Join(dir, "01-conf-many-tables-2.6.12-1+deb12u4-1")
	for _, tr := range big.Trials {
		full, err := os.ReadFile(filepath.Join(ev, fmt.Sprintf("trial-%02d-transcript.txt", tr.N)))
		if err != nil || string(full) != TranscriptText(tr.Exchanges) {
			t.Errorf("trial %d: the evidence lacks the full transcript (%d bytes, %v)", tr.N, len(full), err)
		}
		block, err := os.ReadFile(filepath.Join(ev, fmt.Sprintf("trial-%02d-show-peers-on-a.txt", tr.N)))
		if err != nil || string(block) != tr.Blocks[0].Text {
			t.Errorf("trial %d: the evidence lacks the full block (%d bytes, %v)", tr.N, len(block), err)
		}
	}
	want := fmt.Sprintf("lines folded: full text in [%[1]s/trial-01-transcript.txt](%[1]s/trial-01-transcript.txt)", filepath.Base(ev))
	if !strings.Contains(string(md), want) {
		t.Errorf("report.md lacks %q", want)
	}
	if !strings.Contains(string(page), `lines folded: full text in <a href="01-conf-many-tables-2.6.12-1&#43;deb12u4-1/trial-01-transcript.txt">`) {
		t.Errorf("report.html lacks the link to the transcript")
	}
	// The transcript's first and last lines are shown.
	tr := TranscriptText(big.Trials[0].Exchanges)
	first, _, _ := strings.Cut(tr, "\n")
	lastLines := strings.Split(strings.TrimSuffix(tr, "\n"), "\n")
	if !strings.Contains(string(md), first) || !strings.Contains(string(md), lastLines[len(lastLines)-1]) {
		t.Error("report.md lacks the transcript's first or last line")
	}
	// The small cells are whole, as before.
	if !strings.Contains(string(md), "- new worker 12 listed") {
		t.Error("a small cell lost its notes")
	}
}

// A cell of many trials, each whole but together over the cell budget:
// the later trials are one line each, pointing at trials.json; many such
// cells: the later sections keep their header lines, pointing at their
// evidence directory. The matrix and the summary table stay whole, first.
func TestBudgets(t *testing.T) {
	block := strings.Repeat("0x55e local_id=1 remote_id=0 flags=0x0 remote_data=0x0 last_acked=0 last_pushed=0\n", 90)
	cell := func(i int) Result {
		r := Result{Suite: fmt.Sprintf("s%02d", i), Title: "t", Build: "deb:bookworm", Name: "2.6.12", Verdict: verdict.Pass, TrialsRun: 300, Noun: "rounds", VV: "HAProxy version 2.6.12\n"}
		for n := 1; n <= 300; n++ {
			r.Trials = append(r.Trials, verdict.Trial{N: n, Notes: []string{fmt.Sprintf("round %d", n)}, Blocks: []verdict.Block{{Title: "show peers", Text: block}}})
		}
		return r
	}
	var rs []Result
	for i := 1; i <= 12; i++ {
		rs = append(rs, cell(i))
	}
	run := Run{ID: "r", Started: time.Unix(0, 0), Results: rs}
	dir, err := Write(t.TempDir(), run)
	if err != nil {
		t.Fatal(err)
	}
	checkBounds(t, dir, 12)
	b, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	md := string(b)
	if md != Markdown(run) {
		t.Fatal("Markdown is not deterministic")
	}
	top, secs := sections(t, md, "\n## #")
	if !strings.HasPrefix(top, "# harp run r") || strings.Count(top, "| #s") != 24 {
		t.Errorf("the matrix and the summary table are not whole at the top:\n%s", top)
	}
	first := secs[0]
	if !strings.Contains(first, "### round 1: held") || !strings.Contains(first, "from round ") ||
		!strings.Contains(first, "- round 300: held (0.0 s)") || !strings.Contains(first, "[01-s01-2.6.12/trials.json](01-s01-2.6.12/trials.json)") {
		t.Errorf("the first cell is not cut to its budget with one line per later round:\n%.3000s", first)
	}
	last := secs[11]
	if strings.Contains(last, "round 1") || !strings.Contains(last, "Details not shown: this report reached its 4 MiB budget") ||
		!strings.Contains(last, "[12-s12-2.6.12/](12-s12-2.6.12/)") || !strings.Contains(last, "- Verdict: **PASS**") {
		t.Errorf("the last cell keeps more or less than its header lines:\n%s", last)
	}
	// A REPRODUCED cell late in the run still gets its details: the
	// budget goes to what is read first.
	rs[11].Verdict = verdict.Reproduced
	_, secs = sections(t, Markdown(run), "\n## #")
	if strings.Contains(secs[11], "Details not shown") || !strings.Contains(secs[11], "### round 1: held") {
		t.Errorf("the late REPRODUCED cell lost its details to PASS cells before it:\n%.2000s", secs[11])
	}
	rs[11].Verdict = verdict.Pass
	page, _ := os.ReadFile(filepath.Join(dir, "report.html"))
	for _, want := range []string{`<li>round 300: held (0.0 s)</li>`, `<a href="12-s12-2.6.12/">12-s12-2.6.12/</a>`, `<a href="01-s01-2.6.12/trials.json">`} {
		if !strings.Contains(string(page), want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
}

// A crash row's backtrace of every thread folds; the evidence keeps it.
func TestCrashFolds(t *testing.T) {
	cells := crashCells()
	cells[0].Crashes[0].Backtrace = numbered(5000)
	run := Run{ID: "c", Started: time.Unix(0, 0), Results: CrashRows(cells)}
	dir, err := Write(t.TempDir(), run)
	if err != nil {
		t.Fatal(err)
	}
	checkBounds(t, dir, 3)
	md, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	if !strings.Contains(string(md), "... 4920 lines folded: full text in [03-crash-2.6.12-1+deb12u4/crash-01-backtrace.txt](03-crash-2.6.12-1+deb12u4/crash-01-backtrace.txt)") {
		t.Errorf("the backtrace does not fold:\n%s", md)
	}
	full, err := os.ReadFile(filepath.Join(dir, "03-crash-2.6.12-1+deb12u4", "crash-01-backtrace.txt"))
	if err != nil || string(full) != numbered(5000)+"\n" {
		t.Errorf("crash-01-backtrace.txt: %d bytes, %v", len(full), err)
	}
}

// The issue report keeps its own cap (a GitHub comment) on the same cell.
func TestIssueReportOfManyTables(t *testing.T) {
	r := manyTablesCell(1)
	md, err := PropertyMarkdown(Run{ID: "r", Results: []Result{r}}, "conf-many-tables")
	if err != nil {
		t.Fatal(err)
	}
	if len(md) > maxIssueReport || !strings.Contains(md, "**First violation**") {
		t.Errorf("issue report: %d bytes (cap %d)", len(md), maxIssueReport)
	}
}

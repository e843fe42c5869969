package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/harp-project/harp/harness/core/verdict"
)

const orphanSig = "_fd_delete_orphan <- sock_unbind <- do_unbind_listener <- unbind_listener"

// Debian 2.6.12 on two suites: #3517 met an old worker's crash after a
// reload, conf-x none; both looked at their nodes.
func crashCells() []Result {
	segv := verdict.Crash{Node: "node-3517", PID: 9, Code: 139, Signal: "Segmentation fault", Process: "old worker", Suite: "3517",
		Signature: orphanSig, LastLog: "[WARNING]  (1) : Former worker (9) exited with code 139 (Segmentation fault)",
		Backtrace: verdict.CrashingThreadMarker + "\n#0  0x000055fedc47c260 in _fd_delete_orphan ()\n#1  0x000055fedc47378d in sock_unbind ()"}
	return []Result{
		{Suite: "3517", Title: "tables lost", Build: "deb:bookworm", Name: "2.6.12-1+deb12u4", Version: "2.6.12-1+deb12u4", Verdict: verdict.Pass,
			TrialsRun: 3, Reason: "expected behaviour held in 3 of 3 reloads", Crashes: []verdict.Crash{segv}, CrashWatch: &verdict.CrashWatch{Nodes: 3}},
		{Suite: "conf-x", Title: "x", Build: "deb:bookworm", Name: "2.6.12-1+deb12u4", Version: "2.6.12-1+deb12u4", Verdict: verdict.Inconclusive,
			Reason: "reading node2's table kept failing", CrashWatch: &verdict.CrashWatch{Nodes: 1}},
	}
}

func TestCrashRow(t *testing.T) {
	row, ok := CrashRow(crashCells())
	if !ok || row.Suite != "crash" || row.Verdict != verdict.Reproduced || row.TrialsRun != 2 || row.TrialsViolated != 1 || len(row.Crashes) != 1 {
		t.Fatalf("an old worker's crash in a PASS cell is the build's crash row REPRODUCED: %+v", row)
	}
	if !strings.Contains(row.Reason, "1 old worker: Segmentation fault in "+orphanSig+" (#3517)") {
		t.Errorf("reason: %s", row.Reason)
	}
	if Cell(row) != "REPRODUCED 1/2" {
		t.Errorf("matrix cell %q", Cell(row))
	}
	if _, ok := CrashRow([]Result{{Suite: "3517", Build: "deb:9", Verdict: verdict.Error, Reason: "deb:9 is not served"}}); ok {
		t.Error("a build that could not be made ran no HAProxy: no crash row")
	}
	none := crashCells()
	none[0].Crashes, none[0].CrashWatch, none[1].CrashWatch = nil, &verdict.CrashWatch{}, &verdict.CrashWatch{}
	if _, ok := CrashRow(none); ok {
		t.Error("suites that stopped before starting HAProxy (an unmet machine precondition) checked no node: no crash row")
	}
	clean := crashCells()
	clean[0].Crashes = nil
	if row, _ := CrashRow(clean); row.Verdict != verdict.Pass {
		t.Errorf("no crash, every node read: %s (%s)", row.Verdict, row.Reason)
	}
	clean[1].CrashWatch = &verdict.CrashWatch{Failed: []string{"node2 of #conf-x: reading its logs: EOF"}}
	if row, _ := CrashRow(clean); row.Verdict != verdict.Inconclusive {
		t.Errorf("a node harp could not read: %s (%s)", row.Verdict, row.Reason)
	}
}

// Two shards of one matrix each hold cells of deb:bookworm, so each wrote
// its own crash row for it: the merge makes one row of both shards' cells
// (and counts no crash row as a cell of the matrix).
func TestMergeMakesOneCrashRowPerBuild(t *testing.T) {
	root := t.TempDir()
	cells := crashCells()
	id := NewIdentity([]string{"deb:bookworm"}, "", []string{"3517", "conf-x"}, nil, 0)
	var dirs []string
	for i, c := range cells {
		rs := CrashRows([]Result{c})
		if len(rs) != 2 {
			t.Fatalf("a shard's results with its crash row: %d", len(rs))
		}
		d, err := Write(root, Run{ID: "s" + string(rune('1'+i)), Started: time.Now(), Shard: string(rune('1'+i)) + "/2", Cells: 2, Matrix: id, Results: rs})
		if err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, d)
	}
	run, err := Merge("m", dirs)
	if err != nil {
		t.Fatal(err)
	}
	var rows []Result
	for _, r := range run.Results {
		if r.IsCrashRow() {
			rows = append(rows, r)
		}
	}
	if len(run.Results) != 3 || len(rows) != 1 || rows[0].Verdict != verdict.Reproduced || rows[0].TrialsRun != 2 || len(rows[0].Crashes) != 1 {
		t.Fatalf("merged: %d results, crash rows %+v", len(run.Results), rows)
	}
}

func TestCrashRowInReports(t *testing.T) {
	run := Run{ID: "r", Started: time.Now(), Results: CrashRows(crashCells())}
	junit, err := JUnit(run)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(junit), `classname="harp.crash"`) || !strings.Contains(string(junit), `failures="1"`) {
		t.Errorf("the crash row is a JUnit failure:\n%s", junit)
	}
	md := Markdown(run)
	for _, want := range []string{
		"| #crash " + verdict.CrashTitle + " | REPRODUCED 1/2 |",
		"## #crash on 2.6.12-1+deb12u4: REPRODUCED",
		"Reproduce with harp: `bin/harp run --suites 'suite:3517' --haproxy 'deb:bookworm'`",
		"**Crash**: old worker 9 of node-3517 exited with code 139 (Segmentation fault). Met by #3517. Signature: `" + orphanSig + "`.",
		"#0  0x000055fedc47c260 in _fd_delete_orphan ()",
		"**Crashes** (evidence in the crash row of 2.6.12-1+deb12u4): 1 old worker: Segmentation fault in " + orphanSig,
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	if n := strings.Count(md, "in _fd_delete_orphan ()"); n != 1 {
		t.Errorf("the backtrace is shown once, in the crash row: %d times", n)
	}
	page, err := HTML(run)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<code>" + strings.ReplaceAll(orphanSig, "<", "&lt;") + "</code>", "in _fd_delete_orphan ()", "evidence in the crash row"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	dir, err := Write(t.TempDir(), run)
	if err != nil {
		t.Fatal(err)
	}
	sum, _ := os.ReadFile(filepath.Join(dir, "summary.json"))
	for _, want := range []string{`"suite": "crash"`, `"signature": "` + orphanSig + `"`, `"process": "old worker"`, `"nodes_checked": 3`} {
		if !strings.Contains(string(sum), want) {
			t.Errorf("summary.json lacks %s", want)
		}
	}
}

// Every crash of a suite goes into its issue report, one in full per
// signature, the others named.
func TestIssueShowsEveryCrash(t *testing.T) {
	cells := crashCells()
	c := cells[0].Crashes[0]
	other := c
	other.Node, other.PID = "node-3517-2", 8
	abrt := verdict.Crash{Node: "node-3517-3", PID: 7, Code: 134, Signal: "Aborted", Process: "worker", Suite: "3517", Backtrace: "#0  0x0 in ha_panic ()", Signature: "ha_panic"}
	cells[0].Crashes = []verdict.Crash{c, other, abrt}
	md, err := IssueMarkdown(Run{ID: "r", Results: cells}, "3517")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"old worker 9 of node-3517 exited with code 139", "worker 7 of node-3517-3 exited with code 134", "Also died the same way (same signal and signature): old worker 8 of node-3517-2."} {
		if !strings.Contains(md, want) {
			t.Errorf("issue report lacks %q:\n%s", want, md)
		}
	}
}

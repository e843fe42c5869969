package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Five nightly runs, --keep 2: the three older ones lose their evidence
// directories, keep summary.json and their reports, and say why; history
// (Previous, Load) still reads them.
func TestPrune(t *testing.T) {
	root := t.TempDir()
	ids := []string{"20260101T020000Z-0001aa", "20260102T020000Z-0002bb", "20260103T020000Z-0003cc", "20260104T020000Z-0004dd", "20260105T020000Z-0005ee"}
	for _, id := range ids {
		if _, err := Write(root, sampleRun(id)); err != nil {
			t.Fatal(err)
		}
	}
	// Not runs: a stray file, a directory without summary.json.
	os.WriteFile(filepath.Join(root, "notes.txt"), []byte("x"), 0o644)
	os.MkdirAll(filepath.Join(root, "scratch", "01-3517-x"), 0o755)
	now := time.Date(2026, 1, 5, 3, 0, 0, 0, time.UTC)
	pruned, err := Prune(root, 2, ids[4], now)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(pruned, " ") != strings.Join([]string{ids[2], ids[1], ids[0]}, " ") {
		t.Errorf("pruned %v", pruned)
	}
	ev := "01-3517-3.0.11-1+deb13u4"
	for i, id := range ids {
		dir := filepath.Join(root, id)
		_, evErr := os.Stat(filepath.Join(dir, ev, "trials.json"))
		note, noteErr := os.ReadFile(filepath.Join(dir, PrunedNote))
		if kept := i >= 3; kept != (evErr == nil) || kept != (noteErr != nil) {
			t.Errorf("%s: evidence %v, note %v; kept should be %v", id, evErr, noteErr, kept)
		}
		for _, f := range []string{"summary.json", "report.md", "report.html", "junit.xml"} {
			if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
				t.Errorf("%s lost %s: %v", id, f, err)
			}
		}
		if i < 3 {
			for _, w := range []string{"Evidence removed 2026-01-05T03:00:00Z by harp nightly --keep 2 (run " + ids[4] + ")", ev + "/", "summary.json, report.md"} {
				if !strings.Contains(string(note), w) {
					t.Errorf("%s: %s lacks %q:\n%s", id, PrunedNote, w, note)
				}
			}
			if run, err := Load(dir); err != nil || len(run.Results) != 2 {
				t.Errorf("a pruned run still loads: %v", err)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(root, "scratch", "01-3517-x")); err != nil {
		t.Error("a directory that is no run was touched")
	}
	if prev, ok := Previous(root, ids[4]); !ok || prev.ID != ids[3] {
		t.Errorf("Previous after pruning: %v %v", prev.ID, ok)
	}
	// Again: nothing more to do; the note of an older pruning stays.
	if again, err := Prune(root, 2, "later", now.Add(time.Hour)); err != nil || len(again) != 0 {
		t.Errorf("second prune: %v %v", again, err)
	}
	note, _ := os.ReadFile(filepath.Join(root, ids[0], PrunedNote))
	if !strings.Contains(string(note), "03:00:00Z") {
		t.Errorf("the first note was rewritten: %s", note)
	}
	// --keep 0: no run keeps evidence.
	if p, err := Prune(root, 0, "x", now); err != nil || len(p) != 2 {
		t.Errorf("--keep 0 pruned %v, %v", p, err)
	}
}

// A summary.json naming an evidence directory out of its run (edited by
// hand, or hostile) never makes Prune remove anything outside it.
func TestPruneStaysInRun(t *testing.T) {
	root := t.TempDir()
	outside := filepath.Join(root, "precious")
	os.MkdirAll(outside, 0o755)
	dir := filepath.Join(root, "20260101T020000Z-0001aa")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "summary.json"), []byte(`{"run_id":"a","results":[{"evidence_dir":"../precious"},{"evidence_dir":".."},{"evidence_dir":"/tmp"}]}`), 0o644)
	if _, err := Write(root, sampleRun("20260102T020000Z-0002bb")); err != nil {
		t.Fatal(err)
	}
	if _, err := Prune(root, 1, "b", time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(outside); err != nil {
		t.Errorf("Prune removed a directory outside the run: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, PrunedNote)); err != nil {
		t.Error(err)
	}
}

func TestCheckKeep(t *testing.T) {
	for k, ok := range map[int]bool{0: true, 1: true, 14: true, MaxKeep: true, -1: false, MaxKeep + 1: false} {
		if err := CheckKeep(k); (err == nil) != ok {
			t.Errorf("--keep %d: %v", k, err)
		}
	}
	if _, err := Prune(t.TempDir(), -1, "x", time.Now()); err == nil {
		t.Error("Prune took --keep -1")
	}
}

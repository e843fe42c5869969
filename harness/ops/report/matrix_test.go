package report

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/harp-project/harp/harness/core/verdict"
)

var sample = []Result{
	{Suite: "3517", Title: "Multiple peers sections lose stick tables on reload", Name: "2.6.12-1+deb12u3", Verdict: verdict.Pass, TrialsRun: 3, Reason: "expected behaviour held in 3 of 3 reloads"},
	{Suite: "3517", Title: "Multiple peers sections lose stick tables on reload", Name: "3.4.7-1", Verdict: verdict.Reproduced, TrialsRun: 3, TrialsViolated: 3, Reason: "first/marker lost in 3 of 3 reloads"},
	{Suite: "listener-livelock", Title: "listener livelock", Name: "3.4.7-1", Verdict: verdict.Inconclusive, Reason: "2 CPUs < 16 threads: this machine cannot show the livelock; run with THREADS=2"},
	{Suite: "3519", Title: "alive flag", Name: "deb:9", Verdict: verdict.Error, Reason: "deb:9 is not served"},
}

func TestMatrix(t *testing.T) {
	md := Matrix(sample, true)
	for _, want := range []string{
		"| suite | 2.6.12-1+deb12u3 | 3.4.7-1 | deb:9 |",
		"| #3517 Multiple peers sections lose stick tables on reload | PASS 0/3 | REPRODUCED 3/3 | - |",
		"| #listener-livelock listener livelock | - | INCONCLUSIVE: 2 CPUs < 16 threads: this machine cannot show the livelock | - |",
		"ERROR: deb:9 is not served",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown matrix lacks %q:\n%s", want, md)
		}
	}
	term := Matrix(sample, false)
	if lines := strings.Split(strings.TrimSpace(term), "\n"); len(lines) != 4 || !strings.Contains(lines[1], "REPRODUCED 3/3") {
		t.Errorf("terminal matrix:\n%s", term)
	}
}

func TestJUnit(t *testing.T) {
	out, err := JUnit(Run{ID: "r", Results: sample})
	if err != nil {
		t.Fatal(err)
	}
	var s junitSuite
	if err := xml.Unmarshal(out, &s); err != nil {
		t.Fatal(err)
	}
	if s.Tests != 4 || s.Failures != 1 || s.Errors != 1 || s.Skipped != 1 || s.Cases[1].Failure == nil || s.Cases[0].Failure != nil {
		t.Errorf("junit = %+v", s)
	}
	if s.Cases[1].Name != "3517 on 3.4.7-1: REPRODUCED (first/marker lost in 3 of 3 reloads)" {
		t.Errorf("case name %q", s.Cases[1].Name)
	}
}

func TestShardsCoverEveryCellOnce(t *testing.T) {
	cells := []int{0, 1, 2, 3, 4, 5, 6}
	seen := map[int]int{}
	for i := 1; i <= 3; i++ {
		for _, c := range Shard(cells, i, 3) {
			seen[c]++
		}
	}
	for _, c := range cells {
		if seen[c] != 1 {
			t.Errorf("cell %d in %d shards", c, seen[c])
		}
	}
	for _, bad := range []string{"0/2", "3/2", "x", "1/0", "1/2x", " 1/2", "1/2/3"} {
		if _, _, err := ParseShard(bad); err == nil {
			t.Errorf("ParseShard(%q) accepted", bad)
		}
	}
}

func TestMergeShards(t *testing.T) {
	root := t.TempDir()
	var dirs []string
	for i, part := range [][]Result{sample[:2], sample[2:]} {
		d, err := Write(root, Run{ID: "shard" + string(rune('a'+i)), Started: time.Now(), Results: part})
		if err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, d)
	}
	run, err := Merge("merged", dirs)
	if err != nil || len(run.Results) != 4 {
		t.Fatalf("Merge = %d results, %v", len(run.Results), err)
	}
	d, err := Write(root, run)
	if err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(d, "report.md"))
	if !strings.Contains(string(md), "REPRODUCED 3/3") || !strings.Contains(string(md), "INCONCLUSIVE: 2 CPUs < 16 threads") {
		t.Errorf("merged report lacks cells:\n%s", md)
	}
	if _, err := os.Stat(filepath.Join(d, "junit.xml")); err != nil {
		t.Error(err)
	}
	if _, err := Merge("x", []string{filepath.Join(root, "nope")}); err == nil {
		t.Error("merging a missing directory succeeded")
	}
}

func TestCompare(t *testing.T) {
	prev := []Result{
		{Suite: "3517", Name: "3.4.7-1", Verdict: verdict.Reproduced},
		{Suite: "3517", Name: "3.2.26-1", Verdict: verdict.Pass},
		{Suite: "3519", Name: "3.4.7-1", Verdict: verdict.Pass},
		{Suite: "3519", Name: "3.2.26-1", Verdict: verdict.Pass},
		{Suite: "3519", Name: "3.0.11-1", Verdict: verdict.Reproduced}, // the mirror stopped serving it
	}
	cur := []Result{
		{Suite: "3517", Name: "3.4.7-1", Verdict: verdict.Pass},         // fixed
		{Suite: "3517", Name: "3.2.26-1", Verdict: verdict.Reproduced},  // regressed
		{Suite: "3519", Name: "3.4.7-1", Verdict: verdict.Inconclusive}, // newly inconclusive
		{Suite: "3519", Name: "3.2.26-1", Verdict: verdict.Pass},        // unchanged
		{Suite: "3519", Name: "3.6.0-1", Verdict: verdict.Pass},         // new build
	}
	var got []string
	for _, c := range Compare(prev, cur) {
		got = append(got, c.String())
	}
	want := []string{
		"fixed: #3517 on 3.4.7-1: REPRODUCED -> PASS",
		"new: #3519 on 3.6.0-1: PASS",
		"newly inconclusive: #3519 on 3.4.7-1: PASS -> INCONCLUSIVE",
		"regressed: #3517 on 3.2.26-1: PASS -> REPRODUCED",
		"vanished: #3519 on 3.0.11-1: was REPRODUCED, not run this time",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Compare:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// A suite split in parts (SplitFrom) did not vanish where they ran.
	split := Compare([]Result{{Suite: "upstream-fixes", Name: "3.4.7-1", Verdict: verdict.Pass}},
		[]Result{{Suite: "upstream-fixes-cli", Name: "3.4.7-1", Verdict: verdict.Pass}})
	if len(split) != 1 || split[0].Kind != "new" {
		t.Errorf("a split suite: %+v", split)
	}
	root := t.TempDir()
	Write(root, Run{ID: "20260101T000000Z-0001", Results: prev})
	Write(root, Run{ID: "20260102T000000Z-0001", Results: cur})
	if p, ok := Previous(root, "20260102T000000Z-0001"); !ok || p.ID != "20260101T000000Z-0001" {
		t.Errorf("Previous = %v %v", p.ID, ok)
	}
}

// The same shard twice, or two shards that share a cell, would count
// cells twice: refused.
func TestMergeRefusesDuplicates(t *testing.T) {
	root := t.TempDir()
	a, err := Write(root, Run{ID: "a", Started: time.Now(), Results: sample[:2]})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Write(root, Run{ID: "b", Started: time.Now(), Results: sample[1:3]})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Merge("m", []string{a, a}); err == nil || !strings.Contains(err.Error(), "the same run a") {
		t.Errorf("the same shard twice: %v", err)
	}
	if _, err := Merge("m", []string{a, b}); err == nil || !strings.Contains(err.Error(), "shards of one matrix never share a cell") {
		t.Errorf("overlapping shards: %v", err)
	}
}

// A merge of some shards only would look like a complete matrix: refused.
func TestMergeNeedsEveryShard(t *testing.T) {
	root := t.TempDir()
	id := NewIdentity([]string{"deb:bookworm", "deb:sid"}, "", []string{"3517", "3519"}, nil, 0)
	a, _ := Write(root, Run{ID: "s1", Started: time.Now(), Shard: "1/2", Cells: 4, Matrix: id, Results: sample[:2]})
	b, _ := Write(root, Run{ID: "s2", Started: time.Now(), Shard: "2/2", Cells: 4, Matrix: id, Results: sample[2:]})
	if _, err := Merge("m", []string{a}); err == nil || !strings.Contains(err.Error(), "shard(s) 2/2 missing") {
		t.Errorf("one shard of two: %v", err)
	}
	if run, err := Merge("m", []string{a, b}); err != nil || len(run.Results) != 4 {
		t.Errorf("both shards: %v", err)
	}
	c, _ := Write(root, Run{ID: "s3", Started: time.Now(), Shard: "2/3", Cells: 6, Matrix: id, Results: sample[2:]})
	if _, err := Merge("m", []string{a, c}); err == nil || !strings.Contains(err.Error(), "not one matrix") {
		t.Errorf("shards of two matrices: %v", err)
	}
}

// Shards of two matrices with the same shard and cell counts (deb:bookworm
// deb:trixie, shard 1/2, and deb:bookworm deb:sid, shard 2/2) would merge
// into a complete-looking matrix of neither: each shard carries its
// matrix's identity and a merge names the difference.
func TestMergeRefusesShardsOfTwoMatrices(t *testing.T) {
	root := t.TempDir()
	suites := []string{"3517"}
	trixie := NewIdentity([]string{"deb:bookworm", "deb:trixie"}, "issue:3517", suites, nil, 0)
	sid := NewIdentity([]string{"deb:bookworm", "deb:sid"}, "issue:3517", suites, nil, 0)
	a, _ := Write(root, Run{ID: "A", Started: time.Now(), Shard: "1/2", Cells: 2, Matrix: trixie, Results: sample[:1]})
	b, _ := Write(root, Run{ID: "B", Started: time.Now(), Shard: "2/2", Cells: 2, Matrix: sid, Results: sample[1:2]})
	_, err := Merge("m", []string{a, b})
	if err == nil || !strings.Contains(err.Error(), "builds deb:bookworm deb:sid, not deb:bookworm deb:trixie") {
		t.Errorf("shards of two matrices: %v", err)
	}
	for name, other := range map[string]*Identity{
		"suites filter": NewIdentity([]string{"deb:bookworm", "deb:trixie"}, "issue:3517 || issue:3519", suites, nil, 0),
		"suites":        NewIdentity([]string{"deb:bookworm", "deb:trixie"}, "issue:3517", []string{"3519"}, nil, 0),
		"parameters":    NewIdentity([]string{"deb:bookworm", "deb:trixie"}, "issue:3517", suites, map[string]string{"NODES": "5"}, 0),
		"trials":        NewIdentity([]string{"deb:bookworm", "deb:trixie"}, "issue:3517", suites, nil, 7),
	} {
		c, _ := Write(t.TempDir(), Run{ID: "C", Started: time.Now(), Shard: "2/2", Cells: 2, Matrix: other, Results: sample[1:2]})
		if _, err := Merge("m", []string{a, c}); err == nil || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), "another matrix") {
			t.Errorf("a different %s: %v", name, err)
		}
	}
	same := NewIdentity([]string{"deb:bookworm", "deb:trixie"}, "issue:3517", suites, nil, 0)
	c, _ := Write(t.TempDir(), Run{ID: "C", Started: time.Now(), Shard: "2/2", Cells: 2, Matrix: same, Results: sample[1:2]})
	run, err := Merge("m", []string{a, c})
	if err != nil || len(run.Results) != 2 || run.Matrix == nil || run.Matrix.Hash != trixie.Hash {
		t.Errorf("two shards of one matrix: %v", err)
	}
}

// A shard written before shards carried their matrix (or one whose
// identity was edited) cannot be told from a shard of another matrix:
// refused, never merged silently.
func TestMergeRefusesShardsWithoutIdentity(t *testing.T) {
	root := t.TempDir()
	id := NewIdentity([]string{"deb:bookworm", "deb:trixie"}, "issue:3517", []string{"3517"}, nil, 0)
	a, _ := Write(root, Run{ID: "A", Started: time.Now(), Shard: "1/2", Cells: 2, Matrix: id, Results: sample[:1]})
	old, _ := Write(root, Run{ID: "old", Started: time.Now(), Shard: "2/2", Cells: 2, Results: sample[1:2]})
	if _, err := Merge("m", []string{a, old}); err == nil || !strings.Contains(err.Error(), "run old is shard 2/2 without its matrix's identity") {
		t.Errorf("a shard of an older harp: %v", err)
	}
	edited := *id
	edited.Builds = []string{"deb:bookworm", "deb:sid"}
	e, _ := Write(root, Run{ID: "E", Started: time.Now(), Shard: "2/2", Cells: 2, Matrix: &edited, Results: sample[1:2]})
	if _, err := Merge("m", []string{a, e}); err == nil || !strings.Contains(err.Error(), "does not match") {
		t.Errorf("an identity whose hash does not match: %v", err)
	}
}

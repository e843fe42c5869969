package main

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harp-project/harp/harness/ops/history/testrepo"
)

// scoreboard --plan on a fresh reports directory lists the releases
// units, says the commits phase waits for them (it ran "no such file"
// before), and sums up what is left to run: units and distinct builds.
func TestScoreboardPlan(t *testing.T) {
	dir, git, commit := testrepo.New(t)
	commit("src/peers.c", "MINOR: first")
	git("tag", "v2.6.0")
	commit("src/peers.c", "BUG/MEDIUM: peers: one")
	commit("src/cli.c", "BUG/MINOR: cli: two")
	git("tag", "v2.7.0")
	out, err := exec.Command("git", "-C", dir, "log", "--format=%h %s", "v2.6.0..v2.7.0").Output()
	if err != nil {
		t.Fatal(err)
	}
	var judged strings.Builder
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		id, subject, _ := strings.Cut(l, " ")
		check := "upstream-fixes-peers/one"
		if strings.Contains(subject, "cli") {
			check = "upstream-fixes-cli/two"
		}
		judged.WriteString(id + "\tyes\tseen from outside\t" + check + "\t-\t-\n")
	}
	js := filepath.Join(t.TempDir(), "judgements.tsv")
	os.WriteFile(js, []byte(judged.String()), 0o644)

	r, w, _ := os.Pipe()
	saved, savedErr := os.Stdout, os.Stderr
	os.Stdout, os.Stderr = w, w
	code := cmdScoreboard(context.Background(), []string{"--repo", dir, "--judgements", js, "--techniques", "none", "--reports", filepath.Join(t.TempDir(), "sb"), "--trials", "2", "--plan"})
	os.Stdout, os.Stderr = saved, savedErr
	w.Close()
	got, _ := io.ReadAll(r)
	text := string(got)
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, text)
	}
	for _, want := range []string{
		"upstream-fixes-peers", "upstream-fixes-cli", "trial 2",
		"commits   (planned once the releases phase has run",
		"to run: 4 units on 2 distinct builds", // 2 suites x 2 trials, on v2.6.0 and v2.7.0
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the plan lacks %q:\n%s", want, text)
		}
	}
}

// A scoreboard that would write runs whose harp names no commit refuses
// to start, saying how to build a harp that does (this test binary is
// built without the commit).
func TestScoreboardNeedsHarpsCommit(t *testing.T) {
	if knownCommit(harpVersion()) {
		t.Skip("this test binary knows its commit")
	}
	r, w, _ := os.Pipe()
	saved := os.Stderr
	os.Stderr = w
	code := cmdScoreboard(context.Background(), []string{"--repo", t.TempDir(), "--reports", t.TempDir()})
	os.Stderr = saved
	w.Close()
	out, _ := io.ReadAll(r)
	if code == 0 || !strings.Contains(string(out), "records no commit") || !strings.Contains(string(out), "make") {
		t.Errorf("exit %d: %s", code, out)
	}
	for _, v := range []struct {
		line string
		want bool
	}{
		{"harp (devel) (commit 4295f51a1b2c, go1.26.8)", true},
		{"harp (devel) (commit 4295f51a1b2c+changes, go1.26.8)", true},
		{"harp (devel) (commit unknown, go1.26.8)", false},
		{"harp (unknown build)", false},
	} {
		if knownCommit(v.line) != v.want {
			t.Errorf("knownCommit(%q) = %v", v.line, !v.want)
		}
	}
}

// Package testrepo makes throwaway git repositories for tests of what reads
// upstream's history (harp history, scoreboard, bisect ordering).
package testrepo

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// New makes an empty git repository in a temporary directory: git runs a
// command in it, commit appends a line to a file and commits it with that
// subject. A machine without git skips the test.
func New(t testing.TB) (dir string, git func(...string), commit func(file, subject string)) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir = t.TempDir()
	git = func(args ...string) {
		t.Helper()
		// The identity and signing are the test's own, whatever the
		// machine's git configuration says.
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	commit = func(file, subject string) {
		t.Helper()
		p := filepath.Join(dir, file)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		f, err := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(subject + "\n")
		f.Close()
		git("add", "-A")
		git("commit", "-q", "-m", subject)
	}
	git("init", "-q")
	return dir, git, commit
}

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// bigFilesAllowed are tracked files over 1 MiB that a test needs, with
// why (the captures are under it).
var bigFilesAllowed = map[string]string{
	// Its range lists the ~8000 commits of v2.9.0..v3.4.0, as harp bisect
	// wrote it; history's TestBisects (and the scoreboard) read every record.
	"fixtures/upstream-bugs/bisects/1014a43e0285.json": "harness/ops/history TestBisects",
}

// No compiled binary is tracked (a 25 MB nemesis binary was, at e54fbc4),
// nor a file over 1 MiB that no test needs: the repository holds sources,
// fixtures and captures.
func TestNoTrackedBinaries(t *testing.T) {
	root, _ := filepath.Abs("../..")
	out, err := exec.Command("git", "-C", root, "ls-files", "-z").Output()
	if err != nil {
		t.Skipf("not a git work tree: %v", err)
	}
	for _, f := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		info, err := os.Stat(filepath.Join(root, f))
		if err != nil {
			continue // deleted in the work tree, not yet committed
		}
		if info.Size() > 1<<20 && bigFilesAllowed[f] == "" {
			t.Errorf("%s is %d bytes: a tracked file over 1 MiB must be listed in bigFilesAllowed with the test that needs it", f, info.Size())
		}
		head := make([]byte, 4)
		fh, err := os.Open(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		n, _ := fh.Read(head)
		fh.Close()
		for _, magic := range [][]byte{[]byte("\x7fELF"), {0xcf, 0xfa, 0xed, 0xfe}, {0xfe, 0xed, 0xfa, 0xcf}} {
			if n == 4 && bytes.Equal(head, magic) {
				t.Errorf("%s is a compiled binary: build it, never track it", f)
			}
		}
	}
}

// README is an index a newcomer reads whole: at most 250 lines, and every
// page it links to is there (the rest of what it once held lives there).
func TestReadmeIsAnIndex(t *testing.T) {
	root, _ := filepath.Abs("../..")
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(readme, []byte("\n")); n > 250 {
		t.Errorf("README.md has %d lines: an index has at most 250; move the topic's text to its page under docs/", n)
	}
	pages, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	for _, page := range append([]string{filepath.Join(root, "README.md")}, pages...) {
		text, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range regexp.MustCompile(`\]\(([^)#\s]+\.md)(#[^)]*)?\)`).FindAllStringSubmatch(string(text), -1) {
			if strings.HasPrefix(m[1], "http") {
				continue
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(page), m[1])); err != nil {
				t.Errorf("%s links to %s, which is not there", strings.TrimPrefix(page, root+"/"), m[1])
			}
		}
	}
}

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// bigFilesAllowed are tracked files over 1 MiB that a test needs, with
// why (none today: the captures are under it).
var bigFilesAllowed = map[string]string{}

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

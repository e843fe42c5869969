package images

import (
	"archive/tar"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// A reproducer's directory goes into a container whole, its script still
// executable.
func TestTarDir(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "reproduce"), []byte("#!/bin/sh\n"), 0o755)
	os.WriteFile(filepath.Join(dir, "haproxy.cfg"), []byte("global\n"), 0o644)
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	var b bytes.Buffer
	if err := tarDir(dir, "repro", &b); err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	tr := tar.NewReader(&b)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got[h.Name] = h.Mode
	}
	want := map[string]int64{"repro/": 0o755, "repro/reproduce": 0o755, "repro/haproxy.cfg": 0o644}
	if len(got) != len(want) {
		t.Errorf("entries %v, want %v (directories below are not a reproducer's)", got, want)
	}
	for name, mode := range want {
		if got[name] != mode {
			t.Errorf("%s: mode %o, want %o", name, got[name], mode)
		}
	}
}

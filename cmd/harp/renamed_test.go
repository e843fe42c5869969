package main

import (
	"flag"
	"io"
	"os"
	"strings"
	"testing"
)

// The old flag names still set the value, and say the new name.
func TestRenamedFlags(t *testing.T) {
	r, w, _ := os.Pipe()
	stderr := os.Stderr
	os.Stderr = w
	fs := flag.NewFlagSet("matrix", flag.ContinueOnError)
	f := newRunFlags(fs, "reports", true, "")
	builds := fs.String("haproxy", "deb:latest", "")
	renamed(fs, "builds", "haproxy", builds)
	err := fs.Parse([]string{"--label-filter", "suite:3517", "--builds", "deb:trixie"})
	os.Stderr = stderr
	w.Close()
	said, _ := io.ReadAll(r)
	if err != nil || f.filter != "suite:3517" || *builds != "deb:trixie" {
		t.Fatalf("old names: err %v, suites %q, haproxy %q", err, f.filter, *builds)
	}
	for _, want := range []string{"harp matrix: --label-filter is now --suites", "harp matrix: --builds is now --haproxy"} {
		if !strings.Contains(string(said), want) {
			t.Errorf("stderr lacks %q:\n%s", want, said)
		}
	}
}

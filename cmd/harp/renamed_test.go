package main

import (
	"flag"
	"go/parser"
	"go/token"
	"io"
	"os"
	"strconv"
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

// harp suites reads the registry only: its code imports no live or ops
// package (the registry, harness/core/suite, is held pure by the layers
// test), so listing suites needs no Docker.
func TestSuitesCommandReadsThePureRegistry(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "suites.go", nil, parser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	for _, im := range f.Imports {
		p, _ := strconv.Unquote(im.Path.Value)
		if strings.Contains(p, "/harness/") && !strings.Contains(p, "/harness/core/") {
			t.Errorf("cmd/harp/suites.go imports %s: harp suites reads the pure registry only", p)
		}
	}
}

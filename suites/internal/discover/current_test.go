package discover

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// scripts/suites-current.sh (which lets a build skip the generator) says
// "current" exactly when the generated file is what Source writes.
func TestSuitesCurrentScriptAgrees(t *testing.T) {
	script, err := os.ReadFile("../../../scripts/suites-current.sh")
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	write := func(rel, text string) {
		t.Helper()
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write("scripts/suites-current.sh", string(script))
	write("suites/a/a.go", "package a\nvar _ = suite.Register(nil)\n")
	write("suites/a/judge/judge.go", "package judge\n")
	write("suites/b/b_test.go", "package b\nvar _ = suite.Register(nil)\n") // a test registers nothing
	write("suites/internal/x/x.go", "package x\nvar _ = suite.Register(nil)\n")
	gen := func() {
		src, err := Source(filepath.Join(root, "suites"))
		if err != nil {
			t.Fatal(err)
		}
		write("suites/all/suites.go", string(src))
	}
	current := func() bool {
		return exec.Command("sh", filepath.Join(root, "scripts", "suites-current.sh")).Run() == nil
	}
	gen()
	if !current() {
		t.Fatal("the generated file read as stale")
	}
	write("suites/c/deep/c.go", "package deep\nvar _ = suite.Register(nil)\n")
	if current() {
		t.Fatal("a new suite directory read as current")
	}
	gen()
	if !current() {
		t.Fatal("regenerated, still stale")
	}
	os.RemoveAll(filepath.Join(root, "suites", "a"))
	if current() {
		t.Fatal("a removed suite read as current")
	}
}

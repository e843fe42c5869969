package spec

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"
)

const sum = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func TestParse(t *testing.T) {
	home, _ := os.UserHomeDir()
	if s, err := Parse("git:~/haproxy@v3.0.0"); err != nil || s.Repo != filepath.Join(home, "haproxy") {
		t.Errorf("~ is the home directory: %+v, %v", s, err)
	}
	good := map[string]Spec{
		"deb:latest":            {Scheme: Deb, Target: "latest"},
		"deb:bookworm":          {Scheme: Deb, Target: "bookworm"},
		"deb:3.0.11-1+deb13u4":  {Scheme: Deb, Target: "3.0.11-1+deb13u4"},
		"bin:/usr/sbin/haproxy": {Scheme: Bin, Target: "/usr/sbin/haproxy"},
		"src:/x/haproxy-3.0.11.tar.gz,patch=a.diff,patch=b.diff,make=USE_OPENSSL=1": {
			Scheme: Src, Target: "/x/haproxy-3.0.11.tar.gz", Patches: []string{"a.diff", "b.diff"}, Make: []string{"USE_OPENSSL=1"}},
		"src:deb:3.0.11": {Scheme: Src, Target: "deb:3.0.11"},
		"src:https://www.haproxy.org/download/3.2/src/haproxy-3.2.9.tar.gz,patch=a.diff,sha256=" + sum: {
			Scheme: Src, Target: "https://www.haproxy.org/download/3.2/src/haproxy-3.2.9.tar.gz", Patches: []string{"a.diff"}, SHA256: sum},
		"git:/src/haproxy@v3.0.0,patch=a.diff,make=DEBUG=-DDEBUG_STRICT": {
			Scheme: Git, Target: "/src/haproxy@v3.0.0", Repo: "/src/haproxy", Ref: "v3.0.0", Patches: []string{"a.diff"}, Make: []string{"DEBUG=-DDEBUG_STRICT"}},
		"git:/my@clones/haproxy@HEAD~3":                             {Scheme: Git, Target: "/my@clones/haproxy@HEAD~3", Repo: "/my@clones/haproxy", Ref: "HEAD~3"},
		"image:haproxy:3.2":                                         {Scheme: Image, Target: "haproxy:3.2"},
		"image:127.0.0.1:5000/library/haproxy:3.2,bin=/opt/haproxy": {Scheme: Image, Target: "127.0.0.1:5000/library/haproxy:3.2", BinPath: "/opt/haproxy"},
		"image:registry.example/team/haproxy@sha256:" + sum:         {Scheme: Image, Target: "registry.example/team/haproxy@sha256:" + sum},
		"git:/src/haproxy@v2.6.0..v3.4.0":                           {Scheme: Git, Target: "/src/haproxy@v2.6.0..v3.4.0", Repo: "/src/haproxy", Ref: "v2.6.0..v3.4.0"},
	}
	for raw, want := range good {
		got, err := Parse(raw)
		if err != nil {
			t.Errorf("Parse(%q): %v", raw, err)
			continue
		}
		want.Raw = raw
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Parse(%q) = %+v, want %+v", raw, got, want)
		}
		if got.String() != raw {
			t.Errorf("String() = %q, want %q", got.String(), raw)
		}
	}
	bad := map[string]string{
		"rpm:3.0":                                 `unknown scheme "rpm"`,
		"3.0.11":                                  "want deb:",
		"deb:":                                    "want deb:",
		"src:/x,patch=":                           "unknown src option",
		"src:/x,frobnicate=1":                     "unknown src option",
		"bin:/x,patch=a.diff":                     "bin takes a path",
		"deb:3.0,patch=x.diff":                    "a deb spec is a Debian release",
		"src:/x.tar.gz,sha256=" + sum:             "unknown src option", // a local file needs no sum
		"src:https://h/x.tar.gz,sha256=abc":       "not 64 hexadecimal digits",
		"git:/src/haproxy":                        "git needs a clone and a ref",
		"git:/src/haproxy@":                       "git needs a clone and a ref",
		"git:/src/haproxy@v2.6.0..":               "a range is",
		"git:/src/haproxy@v2.6.0..v3.0.0,patch=a": "a range is",
		"git:":                           "git:<clone>@<ref>",
		"image:haproxy:3.2,bin=relative": "unknown image option",
		"image:haproxy:3.2,patch=a.diff": "unknown image option",
	}
	for raw, msg := range bad {
		_, err := Parse(raw)
		if err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("Parse(%q) error = %v, want it to mention %q", raw, err, msg)
		}
	}
}

func TestParseList(t *testing.T) {
	got, err := ParseList(" deb:bookworm deb:trixie  src:/a,patch=p.diff ")
	if err != nil || len(got) != 3 || got[2].Patches[0] != "p.diff" {
		t.Fatalf("ParseList = %+v, %v", got, err)
	}
	if _, err := ParseList("  "); err == nil {
		t.Error("empty list accepted")
	}
	if IsRelease := (Spec{Scheme: Deb, Target: "sid"}).IsRelease(); !IsRelease {
		t.Error("sid is a suite")
	}
}

func TestParseListWithSpaces(t *testing.T) {
	got, err := ParseList("src:/my builds/haproxy,patch=/tmp/a fix.diff; deb:trixie\n bin:/usr/sbin/haproxy ")
	if err != nil || len(got) != 3 || got[0].Target != "/my builds/haproxy" || got[0].Patches[0] != "/tmp/a fix.diff" || got[1].Target != "trixie" {
		t.Errorf("with ';': %+v %v", got, err)
	}
	if got, err := ParseList("deb:bookworm deb:trixie"); err != nil || len(got) != 2 {
		t.Errorf("with spaces: %+v %v", got, err)
	}
}

func TestCheck(t *testing.T) {
	tree := t.TempDir()
	os.MkdirAll(filepath.Join(tree, "src"), 0o755)
	for _, f := range []string{"src/haproxy.c", "Makefile", "VERSION"} {
		os.WriteFile(filepath.Join(tree, f), nil, 0o644)
	}
	patch := filepath.Join(t.TempDir(), "fix.diff")
	os.WriteFile(patch, nil, 0o644)
	for raw, want := range map[string]string{
		"src:" + tree + ",patch=" + patch: "",
		"src:/":                           "not an HAProxy source tree",
		"src:~":                           "no such file",
		"src:" + t.TempDir():              "not an HAProxy source tree",
		"src:deb:3.0.11,patch=/nonexistent/fix.diff": "patch file /nonexistent/fix.diff",
		"bin:" + tree: "not an executable file",
		"deb:trixie":  "",
	} {
		s, err := Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		err = s.Check()
		if (want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), want)) {
			t.Errorf("%s: %v, want %q", raw, err, want)
		}
	}
}

// A patch is hashed and read whole: /dev/zero, a FIFO or a huge file would
// hang harp or fill its memory, so each is refused before any work.
func TestCheckPatchIsBoundedRegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.diff")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.diff")
	f, _ := os.Create(big)
	f.Truncate(MaxPatch + 1)
	f.Close()
	small := filepath.Join(dir, "fix.diff")
	os.WriteFile(small, []byte("--- a\n+++ b\n"), 0o644)
	for patch, want := range map[string]string{
		"/dev/zero": "not a regular file",
		fifo:        "not a regular file",
		dir:         "a directory, not a file",
		big:         "larger than 16 MiB",
		small:       "",
	} {
		s, err := Parse("git:" + dir + "@v3.0.0,patch=" + patch)
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- s.Check() }()
		select {
		case err = <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("patch=%s: Check hangs", patch)
		}
		if (want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), want)) {
			t.Errorf("patch=%s: %v, want %q", patch, err, want)
		}
	}
}

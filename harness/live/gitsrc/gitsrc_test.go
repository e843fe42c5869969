package gitsrc

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// repo makes a clone with one commit per tag (empty tag: no tag).
func repo(t *testing.T, tags ...string) string {
	t.Helper()
	dir := t.TempDir()
	run := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	run("init", "-q")
	for i, tag := range tags {
		os.WriteFile(filepath.Join(dir, "VERSION"), []byte(tag+"\n"), 0o644)
		run("add", "-A")
		run("commit", "-q", "-m", "commit "+string(rune('a'+i)))
		if tag != "" {
			run("tag", tag)
		}
	}
	return dir
}

func TestReleasesInVersionOrder(t *testing.T) {
	r := repo(t, "v2.6.0", "v2.6.1", "v2.7-dev1", "v2.7.0", "v2.6.10", "v2.6.2", "v3.0.0", "", "v3.1.0")
	got, err := Releases(context.Background(), r, "v2.6.1", "v3.0.0")
	want := []string{"v2.6.1", "v2.6.2", "v2.6.10", "v2.7.0", "v3.0.0"} // no dev tags, numeric order
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("Releases = %v, %v; want %v", got, err, want)
	}
	for _, c := range []struct{ from, to, msg string }{
		{"v3.0.0", "v2.6.0", "newer than"},
		{"v2.6.0", "v2.9.0", "no tag v2.9.0"},
		{"v2.7-dev1", "v3.0.0", "between release tags"},
	} {
		if _, err := Releases(context.Background(), r, c.from, c.to); err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s..%s: %v, want %q", c.from, c.to, err, c.msg)
		}
	}
	if _, err := Releases(context.Background(), t.TempDir(), "v2.6.0", "v3.0.0"); err == nil || !strings.Contains(err.Error(), "not a git repository") {
		t.Errorf("not a clone: %v", err)
	}
}

func TestResolveAndExport(t *testing.T) {
	r := repo(t, "v3.0.0", "")
	c, err := Resolve(context.Background(), r, "HEAD")
	if err != nil || c.Subject != "commit b" || c.Describe != "v3.0.0-1-g"+c.ID[:7] {
		t.Fatalf("Resolve(HEAD) = %+v, %v", c, err)
	}
	if !strings.Contains(c.Origin(r), c.ID+" (v3.0.0-1-g") || !strings.HasSuffix(c.Origin(r), ": commit b") {
		t.Errorf("Origin = %q", c.Origin(r))
	}
	if _, err := Resolve(context.Background(), r, "v9.9.9"); err == nil || !strings.Contains(err.Error(), `no commit "v9.9.9"`) {
		t.Errorf("unknown ref: %v", err)
	}
	dir := t.TempDir()
	tar, err := Export(context.Background(), r, dir, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("tar", "-tf", tar).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "haproxy/VERSION") {
		t.Errorf("tarball: %v %s", err, out)
	}
	if again, err := Export(context.Background(), r, dir, c.ID); err != nil || again != tar {
		t.Errorf("second export: %s %v", again, err)
	}
}

func TestDescribeLess(t *testing.T) {
	in := []string{"v3.0.1", "v3.0.0-12-gabc1234", "v3.0-dev2", "v2.9.0", "v3.0.0", "v3.0-dev12-3-g0123456", "v3.0-rc1", "v3.0.10"}
	want := []string{"v2.9.0", "v3.0-dev2", "v3.0-dev12-3-g0123456", "v3.0-rc1", "v3.0.0", "v3.0.0-12-gabc1234", "v3.0.1", "v3.0.10"}
	sort.SliceStable(in, func(i, j int) bool { l, _ := DescribeLess(in[i], in[j]); return l })
	if !reflect.DeepEqual(in, want) {
		t.Errorf("order = %v\nwant    %v", in, want)
	}
	if _, ok := DescribeLess("a1b2c3d", "v3.0.0"); ok {
		t.Error("a bare commit id (no tag reached) has no order")
	}
}

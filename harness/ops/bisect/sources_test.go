package bisect

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harp-project/harp/harness/core/spec"
)

func gitRepo(t *testing.T, subjects ...string) (string, []string) {
	t.Helper()
	dir := t.TempDir()
	run := func(args ...string) string {
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	run("init", "-q")
	var ids []string
	for i, s := range subjects {
		os.WriteFile(filepath.Join(dir, "f"), []byte(strings.Repeat("x", i+1)), 0o644)
		run("add", "f")
		run("commit", "-q", "-m", s)
		ids = append(ids, run("rev-parse", "HEAD"))
	}
	return dir, ids
}

func TestGitRangeListsCommitsOldestFirst(t *testing.T) {
	repo, ids := gitRepo(t, "one", "two", "three", "four")
	cs, err := GitRange(context.Background(), repo, ids[1], "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range cs {
		got = append(got, c.Subject)
	}
	if strings.Join(got, ",") != "two,three,four" || cs[0].Commit != ids[1] || cs[2].Label != ids[3][:12] {
		t.Fatalf("range = %+v", cs)
	}
	c, err := Export(context.Background(), repo, t.TempDir(), cs[1], spec.Spec{Make: []string{"V=1"}})
	if err != nil {
		t.Fatal(err)
	}
	if c.Spec.Scheme != spec.Src || !strings.HasSuffix(c.Spec.Target, ids[2]+".tar") || c.SpecRaw != c.Spec.String() || len(c.Spec.Make) != 1 {
		t.Errorf("exported spec %+v", c.Spec)
	}
	out, err := exec.Command("tar", "-tf", c.Spec.Target).Output()
	if err != nil || !strings.Contains(string(out), "haproxy/f") {
		t.Errorf("tarball lists %q (%v), want haproxy/f", out, err)
	}
}

func TestGitRangeErrors(t *testing.T) {
	repo, ids := gitRepo(t, "one", "two")
	ctx := context.Background()
	for _, c := range []struct{ old, new, want string }{
		{ids[1], ids[0], "is not an ancestor"},
		{"nope", ids[1], `no commit "nope"`},
		{ids[0], ids[0], "same commit"},
	} {
		if _, err := GitRange(ctx, repo, c.old, c.new); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("GitRange(%s, %s) = %v, want %q", c.old, c.new, err, c.want)
		}
	}
	if _, err := GitRange(ctx, t.TempDir(), "a", "b"); err == nil || !strings.Contains(err.Error(), "not a git repository") {
		t.Errorf("not a repo: %v", err)
	}
}

func TestDebRange(t *testing.T) {
	vs := []string{"2.6.12-1+deb12u3", "3.0.11-1+deb13u4", "3.2.26-1", "3.4.7-1"}
	cs, err := debRange(vs, vs[0], vs[3], "deb:bookworm", "deb:experimental")
	if err != nil || len(cs) != 4 || cs[1].Label != "3.0.11-1+deb13u4" || cs[1].SpecRaw != "deb:3.0.11-1+deb13u4" {
		t.Fatalf("range = %+v, %v", cs, err)
	}
	cs, err = debRange(vs, vs[1], vs[2], "a", "b")
	if err != nil || len(cs) != 2 {
		t.Errorf("inner range = %+v, %v", cs, err)
	}
	if _, err := debRange(vs, vs[3], vs[0], "deb:experimental", "deb:bookworm"); err == nil || !strings.Contains(err.Error(), "is older than") {
		t.Errorf("reversed ends: %v", err)
	}
}

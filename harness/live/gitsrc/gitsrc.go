// Package gitsrc reads HAProxy builds out of a local git clone: commits by
// ref, their subjects and `git describe`, release tags in a range, and a
// commit's tree as a tarball that a src: build compiles (through ccache,
// so nearby commits rebuild in seconds). Bisect and git: specs share it.
package gitsrc

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/harp-project/harp/harness/live/child"
)

// Commit is one commit of a clone.
type Commit struct {
	ID       string `json:"commit"`
	Subject  string `json:"subject"`
	Describe string `json:"describe,omitempty"` // git describe --tags
}

// Short is the commit's 12-character id.
func (c Commit) Short() string { return c.ID[:min(12, len(c.ID))] }

// Origin says where the build came from, for reports.
func (c Commit) Origin(repo string) string {
	s := fmt.Sprintf("git %s commit %s", repo, c.ID)
	if c.Describe != "" {
		s += " (" + c.Describe + ")"
	}
	return s + ": " + c.Subject
}

// CheckRepo says whether repo is a git repository.
func CheckRepo(ctx context.Context, repo string) error {
	if st, err := os.Stat(repo); err != nil || !st.IsDir() {
		return fmt.Errorf("%s: no such git repository", repo)
	}
	if out, err := Git(ctx, repo, "rev-parse", "--git-dir"); err != nil {
		return fmt.Errorf("%s is not a git repository: %s", repo, out)
	}
	return nil
}

// Resolve finds the commit a ref names (a tag, a branch, HEAD~3, an id).
func Resolve(ctx context.Context, repo, ref string) (Commit, error) {
	if err := CheckRepo(ctx, repo); err != nil {
		return Commit{}, err
	}
	id, err := Git(ctx, repo, "rev-parse", "--verify", "--quiet", ref+"^{commit}")
	if err != nil || id == "" {
		return Commit{}, fmt.Errorf("no commit %q in %s", ref, repo)
	}
	subject, _ := Git(ctx, repo, "log", "-1", "--format=%s", id)
	describe, _ := Git(ctx, repo, "describe", "--tags", "--always", id)
	return Commit{ID: id, Subject: subject, Describe: describe}, nil
}

// Export writes a commit's tree as a tarball under dir (once, by commit
// id) and returns its path.
func Export(ctx context.Context, repo, dir, id string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	tarball := filepath.Join(dir, id+".tar")
	if _, err := os.Stat(tarball); err == nil {
		return tarball, nil
	}
	tmp := fmt.Sprintf("%s.%d.tmp", tarball, os.Getpid())
	if out, err := Git(ctx, repo, "archive", "--format=tar", "--prefix=haproxy/", "-o", tmp, id); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("git archive %s: %s", id[:min(12, len(id))], out)
	}
	return tarball, os.Rename(tmp, tarball)
}

// releaseTag is a release tag: vX.Y.Z (dev and rc tags are not releases).
var releaseTag = regexp.MustCompile(`^v(\d+)\.(\d+)\.(\d+)$`)

// Releases lists the release tags (vX.Y.Z) of the clone from the tag
// oldRef to the tag newRef, both included, in version order: every .0 and
// stable tag present, whatever branch holds it.
func Releases(ctx context.Context, repo, oldRef, newRef string) ([]string, error) {
	if err := CheckRepo(ctx, repo); err != nil {
		return nil, err
	}
	lo, okLo := versionKey(oldRef)
	hi, okHi := versionKey(newRef)
	if !okLo || !okHi {
		return nil, fmt.Errorf("a range of releases runs between release tags (v2.6.0..v3.4.0), not %s..%s", oldRef, newRef)
	}
	if lo > hi {
		return nil, fmt.Errorf("%s is newer than %s: the range runs from the older tag to the newer", oldRef, newRef)
	}
	out, err := Git(ctx, repo, "tag", "--list", "v*")
	if err != nil {
		return nil, fmt.Errorf("git tag: %s", out)
	}
	var tags []string
	for _, t := range strings.Fields(out) {
		if k, ok := versionKey(t); ok && k >= lo && k <= hi {
			tags = append(tags, t)
		}
	}
	for _, end := range []string{oldRef, newRef} {
		if !contains(tags, end) {
			return nil, fmt.Errorf("no tag %s in %s", end, repo)
		}
	}
	sort.Slice(tags, func(i, j int) bool { a, _ := versionKey(tags[i]); b, _ := versionKey(tags[j]); return a < b })
	return tags, nil
}

// versionKey orders release tags: v3.0.10 after v3.0.9.
func versionKey(tag string) (int64, bool) {
	m := releaseTag.FindStringSubmatch(tag)
	if m == nil {
		return 0, false
	}
	var k int64
	for _, p := range m[1:] {
		n, _ := strconv.ParseInt(p, 10, 64)
		k = k*100000 + n
	}
	return k, true
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// Git runs git in repo and returns its trimmed output.
func Git(ctx context.Context, repo string, args ...string) (string, error) {
	out, err := child.Output(ctx, 10*time.Minute, "git", append([]string{"-C", repo}, args...)...)
	return strings.TrimSpace(string(out)), err
}

// describeTag reads `git describe --tags` output: a tag vX.Y.Z or
// vX.Y-devN (or -rcN), then -DISTANCE-gSHA when the commit is past it.
var describeTag = regexp.MustCompile(`^v(\d+)\.(\d+)(?:\.(\d+)|-(dev|rc)(\d+))(?:-(\d+)-g[0-9a-f]+)?$`)

// DescribeLess orders commits by their `git describe`: by the tag's
// version (a -dev or -rc tag before its .0), then by the distance past
// it. ok is false when either cannot be read (no tag reached).
func DescribeLess(a, b string) (less, ok bool) {
	ka, okA := describeKey(a)
	kb, okB := describeKey(b)
	if !okA || !okB {
		return false, false
	}
	for i := range ka {
		if ka[i] != kb[i] {
			return ka[i] < kb[i], true
		}
	}
	return false, true
}

func describeKey(d string) ([4]int64, bool) {
	m := describeTag.FindStringSubmatch(d)
	if m == nil {
		return [4]int64{}, false
	}
	num := func(s string) int64 { n, _ := strconv.ParseInt(s, 10, 64); return n }
	k := [4]int64{num(m[1]), num(m[2]), 0, num(m[6])}
	switch m[4] {
	case "dev":
		k[2] = -2000 + num(m[5])
	case "rc":
		k[2] = -1000 + num(m[5])
	default:
		k[2] = num(m[3])
	}
	return k, true
}

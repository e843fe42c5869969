package bisect

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/harp-project/harp/harness/core/spec"
	"github.com/harp-project/harp/harness/live/debmirror"
	"github.com/harp-project/harp/harness/live/gitsrc"
)

// DebRange lists the builds the mirror serves from oldEnd to newEnd, in
// Debian's version order (dpkg's), both ends included.
func DebRange(ctx context.Context, m *debmirror.Mirror, oldEnd, newEnd spec.Spec) ([]Candidate, error) {
	for _, s := range []spec.Spec{oldEnd, newEnd} {
		if s.Scheme != spec.Deb {
			return nil, fmt.Errorf("bisect across Debian builds takes deb: specs, not %q (use --repo to bisect commits)", s.Raw)
		}
	}
	a, err := m.Resolve(ctx, oldEnd.Target)
	if err != nil {
		return nil, err
	}
	b, err := m.Resolve(ctx, newEnd.Target)
	if err != nil {
		return nil, err
	}
	if a.Version == b.Version {
		return nil, fmt.Errorf("both ends are the same build %s", a.Version)
	}
	served, err := m.Builds(ctx) // newest first, in dpkg's order
	if err != nil {
		return nil, err
	}
	var versions []string
	for i := len(served) - 1; i >= 0; i-- {
		if v := served[i].Version; len(versions) == 0 || versions[len(versions)-1] != v { // one per version, whatever suites serve it
			versions = append(versions, v)
		}
	}
	return debRange(versions, a.Version, b.Version, oldEnd.Raw, newEnd.Raw)
}

// debRange cuts versions (oldest first) from old to new, both included.
func debRange(versions []string, old, new, oldRaw, newRaw string) ([]Candidate, error) {
	var out []Candidate
	in := false
	for _, v := range versions {
		if v == new && !in {
			return nil, fmt.Errorf("deb:%s (%s) is older than deb:%s (%s): the range runs from the older build to the newer", new, newRaw, old, oldRaw)
		}
		if v == old {
			in = true
		}
		if in {
			s, _ := spec.Parse("deb:" + v)
			out = append(out, Candidate{Spec: s, SpecRaw: s.Raw, Label: v})
		}
		if v == new {
			return out, nil
		}
	}
	return nil, fmt.Errorf("deb:%s and deb:%s are not both served by the mirror", old, new)
}

// GitRange lists the commits of repo from oldRef to newRef along the first
// parents, both ends included, oldest first. Their specs are filled in by
// Export when a step needs them.
func GitRange(ctx context.Context, repo, oldRef, newRef string) ([]Candidate, error) {
	if _, err := os.Stat(filepath.Join(repo, ".git")); err != nil {
		if out, err := git(ctx, repo, "rev-parse", "--git-dir"); err != nil {
			return nil, fmt.Errorf("--repo %s is not a git repository: %s", repo, out)
		}
	}
	var ids [2]string
	for i, ref := range []string{oldRef, newRef} {
		out, err := git(ctx, repo, "rev-parse", "--verify", "--quiet", ref+"^{commit}")
		if err != nil {
			return nil, fmt.Errorf("%s: no commit %q in %s", map[int]string{0: "old end", 1: "new end"}[i], ref, repo)
		}
		ids[i] = out
	}
	if ids[0] == ids[1] {
		return nil, fmt.Errorf("both ends are the same commit %s", ids[0][:12])
	}
	if _, err := git(ctx, repo, "merge-base", "--is-ancestor", ids[0], ids[1]); err != nil {
		return nil, fmt.Errorf("%s is not an ancestor of %s: the range runs from the older commit to the newer", oldRef, newRef)
	}
	out, err := git(ctx, repo, "log", "--reverse", "--first-parent", "--ancestry-path", "--format=%H%x09%s", ids[0]+".."+ids[1])
	if err != nil {
		return nil, fmt.Errorf("git log: %s", out)
	}
	subject, _ := git(ctx, repo, "log", "-1", "--format=%s", ids[0])
	cands := []Candidate{commit(ids[0], subject)}
	for _, line := range strings.Split(out, "\n") {
		if id, subj, ok := strings.Cut(line, "\t"); ok {
			cands = append(cands, commit(id, subj))
		}
	}
	return cands, nil
}

func commit(id, subject string) Candidate {
	return Candidate{Label: id[:12], Commit: id, Subject: subject}
}

// Export writes a commit's tree as a tarball under dir (once) and returns
// the candidate with a src: spec for it, carrying opts' patches and make
// variables.
func Export(ctx context.Context, repo, dir string, c Candidate, opts spec.Spec) (Candidate, error) {
	tarball, err := gitsrc.Export(ctx, repo, dir, c.Commit)
	if err != nil {
		return c, err
	}
	c.Spec = spec.Spec{Scheme: spec.Src, Target: tarball, Patches: opts.Patches, Make: opts.Make, Flavor: opts.Flavor}
	c.Spec.Raw = c.Spec.String()
	c.SpecRaw = c.Spec.Raw
	return c, nil
}

func git(ctx context.Context, repo string, args ...string) (string, error) {
	return gitsrc.Git(ctx, repo, args...)
}

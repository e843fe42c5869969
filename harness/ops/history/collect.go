package history

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/harp-project/harp/harness/live/gitsrc"
)

// Files are the sources whose fixes make the scoreboard: the code harp's
// suites drive from outside.
var Files = []string{"src/peers.c", "src/stick_table.c", "src/mworker.c", "src/cli.c", "src/listener.c", "src/haproxy.c"}

// reloadPath picks, of the fixes that touch src/haproxy.c alone among
// Files, those on the reload and master-worker paths (the rest of that
// file is startup, options and platform code harp does not drive).
var reloadPath = regexp.MustCompile(`(?i)reload|mworker|master|worker|sigusr|soft[- ]?stop|hard[- ]?stop|\bexec|-sf\b|-st\b|old process|pidfile|seamless`)

// Collect lists the BUG/ commits of repo after since up to head that
// touch Files, oldest first, with the releases around each.
func Collect(ctx context.Context, repo, since, head string) ([]Fix, error) {
	if err := gitsrc.CheckRepo(ctx, repo); err != nil {
		return nil, err
	}
	if _, _, ok := releaseKey(since); !ok {
		return nil, fmt.Errorf("--since is a .0 release tag (v2.6.0), not %q", since)
	}
	for _, ref := range []string{since, head} {
		if _, err := gitsrc.Resolve(ctx, repo, ref); err != nil {
			return nil, err
		}
	}
	if err := checkRange(ctx, repo, since, head); err != nil {
		return nil, err
	}
	out, err := gitsrc.Git(ctx, repo, "tag", "--list", "v*.0")
	if err != nil {
		return nil, fmt.Errorf("git tag: %s", out)
	}
	sa, sb, _ := releaseKey(since)
	var rels []string
	for _, t := range SortReleases(strings.Fields(out)) {
		if a, b, _ := releaseKey(t); a > sa || a == sa && b >= sb {
			rels = append(rels, t)
		}
	}
	// Which releases hold which commits: one rev-list per release.
	in := make([]map[string]bool, len(rels))
	for i, t := range rels {
		out, err := gitsrc.Git(ctx, repo, "rev-list", since+".."+t)
		if err != nil {
			return nil, fmt.Errorf("git rev-list %s..%s: %s", since, t, out)
		}
		in[i] = map[string]bool{}
		for _, id := range strings.Fields(out) {
			in[i][id] = true
		}
	}
	args := append([]string{"log", "--reverse", "--name-only", "--format=%x1e%H %P%x1f%s%x1f%b%x1f", since + ".." + head, "--"}, Files...)
	out, err = gitsrc.Git(ctx, repo, args...)
	if err != nil {
		return nil, fmt.Errorf("git log: %s", out)
	}
	var fixes []Fix
	var bodies []string
	for _, rec := range strings.Split(out, "\x1e") {
		f := strings.Split(rec, "\x1f")
		if len(f) < 4 {
			continue
		}
		ids, subject, body := strings.Fields(f[0]), f[1], f[2]
		if len(ids) == 0 {
			continue
		}
		id, parent := ids[0], ""
		if len(ids) > 1 {
			parent = ids[1]
		}
		sev := Severity(subject)
		if sev == "" {
			continue
		}
		var files []string
		for _, p := range strings.Fields(f[3]) {
			for _, w := range Files {
				if p == w {
					files = append(files, p)
				}
			}
		}
		if len(files) == 1 && files[0] == "src/haproxy.c" && !reloadPath.MatchString(subject+"\n"+body) {
			continue
		}
		fx := Fix{Commit: id, Parent: parent, Subject: subject, Severity: sev, Files: files}
		bodies = append(bodies, body)
		for i, t := range rels {
			if in[i][id] {
				fx.Fixed = t
				if i > 0 {
					fx.Bad = rels[i-1]
				}
				break
			}
		}
		if fx.Fixed == "" && len(rels) > 0 {
			fx.Bad = rels[len(rels)-1] // not released yet: the last release has the bug
		}
		fixes = append(fixes, fx)
	}
	if err := firstTags(ctx, repo, fixes); err != nil {
		return nil, err
	}
	if err := namedCommits(ctx, repo, since, head, fixes, bodies); err != nil {
		return nil, err
	}
	return fixes, nil
}

// hexID is a word that may be an abbreviated commit id: 7 to 40 hex
// digits with a letter among them (a number alone is rarely an id).
var hexID = regexp.MustCompile(`\b[0-9a-f]{7,40}\b`)

// namedCommits fills each fix's Names from its message: the words that
// resolve to a commit of repo other than the fix, with their nearest tag
// and whether they are after since.
func namedCommits(ctx context.Context, repo, since, head string, fixes []Fix, bodies []string) error {
	out, err := gitsrc.Git(ctx, repo, "rev-list", since+".."+head)
	if err != nil {
		return fmt.Errorf("git rev-list %s..%s: %s", since, head, out)
	}
	after := map[string]bool{}
	for _, id := range strings.Fields(out) {
		after[id] = true
	}
	resolved := map[string]string{} // word -> full id ("" when none)
	for i := range fixes {
		seen := map[string]bool{}
		for _, w := range hexID.FindAllString(bodies[i], -1) {
			if !strings.ContainsAny(w, "abcdef") || strings.HasPrefix(fixes[i].Commit, w) {
				continue
			}
			full, ok := resolved[w]
			if !ok {
				r, err := gitsrc.Git(ctx, repo, "rev-parse", "--verify", "-q", w+"^{commit}")
				if err == nil {
					full = strings.TrimSpace(r)
				}
				resolved[w] = full
			}
			if full == "" || full == fixes[i].Commit || seen[full] {
				continue
			}
			seen[full] = true
			fixes[i].Names = append(fixes[i].Names, Named{Commit: full[:12], After: after[full]})
		}
	}
	// Their nearest tags, in one name-rev.
	var ids []string
	for _, f := range fixes {
		for _, n := range f.Names {
			ids = append(ids, n.Commit)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	out, err = gitsrc.Git(ctx, repo, append([]string{"name-rev", "--tags", "--name-only", "--refs=v*"}, ids...)...)
	if err != nil {
		return fmt.Errorf("git name-rev: %s", out)
	}
	tags := strings.Fields(out)
	if len(tags) != len(ids) {
		return fmt.Errorf("git name-rev named %d of %d commits", len(tags), len(ids))
	}
	k := 0
	for i := range fixes {
		for j := range fixes[i].Names {
			t := strings.TrimPrefix(tags[k], "tags/")
			if c := strings.IndexAny(t, "~^"); c >= 0 {
				t = t[:c]
			}
			if t == "undefined" {
				t = ""
			}
			fixes[i].Names[j].Tag = t
			k++
		}
	}
	return nil
}

// checkRange refuses a range that reads no history: a head that is not a
// descendant of since (older, or on another line: since..head would be
// empty or the wrong commits) or one equal to it. Its board would say
// "no fixes", and overwrite the committed one.
func checkRange(ctx context.Context, repo, since, head string) error {
	count := func(rng string) (int, error) {
		out, err := gitsrc.Git(ctx, repo, "rev-list", "--count", rng)
		if err != nil {
			return 0, fmt.Errorf("git rev-list --count %s: %s", rng, out)
		}
		n, err := strconv.Atoi(out)
		if err != nil {
			return 0, fmt.Errorf("git rev-list --count %s: %q is no count", rng, out)
		}
		return n, nil
	}
	behind, err := count(head + ".." + since)
	if err != nil {
		return err
	}
	if behind > 0 {
		return fmt.Errorf("--head %s is not a descendant of --since %s (%d commit(s) of %s are not in %s): give a --head that contains the release", head, since, behind, since, head)
	}
	n, err := count(since + ".." + head)
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("--since %s..--head %s holds no commit: the history would be empty", since, head)
	}
	return nil
}

// firstTags names each fix's nearest tag (git describe --contains).
func firstTags(ctx context.Context, repo string, fixes []Fix) error {
	for lo := 0; lo < len(fixes); lo += 200 {
		hi := min(lo+200, len(fixes))
		args := []string{"name-rev", "--tags", "--name-only", "--refs=v*"}
		for _, f := range fixes[lo:hi] {
			args = append(args, f.Commit)
		}
		out, err := gitsrc.Git(ctx, repo, args...)
		if err != nil {
			return fmt.Errorf("git name-rev: %s", out)
		}
		names := strings.Fields(out)
		if len(names) != hi-lo {
			return fmt.Errorf("git name-rev named %d of %d commits", len(names), hi-lo)
		}
		for i, n := range names {
			if n == "undefined" {
				n = ""
			}
			n = strings.TrimPrefix(n, "tags/")
			if k := strings.IndexAny(n, "~^"); k >= 0 {
				n = n[:k]
			}
			fixes[lo+i].FirstTag = n
		}
	}
	return nil
}

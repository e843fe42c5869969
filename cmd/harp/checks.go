package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"
	"time"

	"github.com/moby/moby/client"

	"github.com/harp-project/harp/harness/core/progress"
	"github.com/harp-project/harp/harness/core/spec"
	"github.com/harp-project/harp/harness/live/engine"
	"github.com/harp-project/harp/harness/live/gitsrc"
)

// maxTrials bounds --trials: a typo must not start a run of days.
const maxTrials = 1000

// checkTrials refuses a trial count given outside 1 to maxTrials (not
// given: each suite's default).
func checkTrials(fs *flag.FlagSet, n int) error {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == "trials" })
	if given && (n < 1 || n > maxTrials) {
		return fmt.Errorf("--trials %d: want 1 to %d (leave it out for each suite's default)", n, maxTrials)
	}
	return nil
}

// checkCPUs refuses a --cpus share Docker would refuse later (0: no limit):
// a number, from Docker's 0.01 to this machine's CPUs.
func checkCPUs(v float64) error {
	switch n := runtime.NumCPU(); {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return fmt.Errorf("--cpus %v: not a number: want a share of CPU time such as 0.3", v)
	case v != 0 && v < 0.01:
		return fmt.Errorf("--cpus %v: want a share of CPU time from 0.01 to %d (0: no limit)", v, n)
	case v > float64(n):
		return fmt.Errorf("--cpus %v: this machine has %d CPUs: want a share from 0.01 to %d", v, n, n)
	}
	return nil
}

// maxSettle bounds doctor's --settle: it reads every socket again each
// second, and a link that is down for an hour is down.
const maxSettle = time.Hour

func checkSettle(d time.Duration) error {
	if d < 0 || d > maxSettle {
		return fmt.Errorf("--settle %s: want 0 to %s (0: one read)", d, "1h")
	}
	return nil
}

// parseSpecs reads a list of build specs and checks what they name on
// this machine before any work (a missing patch, a directory that is not
// an HAProxy tree).
func parseSpecs(raw string) ([]spec.Spec, error) {
	specs, err := spec.ParseList(raw)
	if err == nil {
		err = spec.CheckAll(specs)
	}
	if err == nil {
		specs, err = expandRanges(specs)
	}
	if err == nil {
		err = orderGit(specs)
	}
	return specs, err
}

// oneSpec reads --haproxy of a command that tests one build: a list of
// exactly one spec.
func oneSpec(raw string) ([]spec.Spec, error) {
	if strings.TrimSpace(raw) == "" {
		return nil, fmt.Errorf("--haproxy: no build spec given (e.g. --haproxy deb:bookworm)")
	}
	specs, err := parseSpecs(raw)
	if err != nil {
		return nil, err
	}
	if len(specs) != 1 {
		var names []string
		for _, s := range specs {
			names = append(names, s.Raw)
		}
		return nil, fmt.Errorf("--haproxy takes one build spec, not %d (%s)", len(specs), strings.Join(names, " "))
	}
	return specs, nil
}

// orderGit puts the git: builds of each clone in history order, by `git
// describe` (v3.0-dev2, v3.0.0, v3.0.0-12-g..., v3.0.1), in the places
// those builds held: the matrix's columns then read oldest to newest,
// whatever order they were named in. A build no tag reaches keeps its
// place after the ones that have an order.
func orderGit(specs []spec.Spec) error {
	byRepo := map[string][]int{}
	for i, s := range specs {
		if s.Scheme == spec.Git {
			byRepo[s.Repo] = append(byRepo[s.Repo], i)
		}
	}
	for _, slots := range byRepo {
		if len(slots) < 2 {
			continue
		}
		type named struct {
			s        spec.Spec
			describe string
		}
		var builds []named
		for _, i := range slots {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			c, err := gitsrc.Resolve(ctx, specs[i].Repo, specs[i].Ref)
			cancel()
			if err != nil {
				return fmt.Errorf("build spec %q: %w", specs[i].Raw, err)
			}
			builds = append(builds, named{specs[i], c.Describe})
		}
		sort.SliceStable(builds, func(a, b int) bool {
			less, ok := gitsrc.DescribeLess(builds[a].describe, builds[b].describe)
			if !ok { // no order known: those with one first, the rest as named
				_, okA := gitsrc.DescribeLess(builds[a].describe, builds[a].describe)
				_, okB := gitsrc.DescribeLess(builds[b].describe, builds[b].describe)
				return okA && !okB
			}
			return less
		})
		for k, i := range slots {
			specs[i] = builds[k].s
		}
	}
	return nil
}

// expandRanges replaces each git:CLONE@vA..vB by the release tags the
// clone holds between them, in version order.
func expandRanges(specs []spec.Spec) ([]spec.Spec, error) {
	var out []spec.Spec
	for _, s := range specs {
		from, to, ok := s.Range()
		if !ok {
			out = append(out, s)
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		tags, err := gitsrc.Releases(ctx, s.Repo, from, to)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("build spec %q: %w", s.Raw, err)
		}
		for _, t := range tags {
			one, err := spec.Parse("git:" + s.Repo + "@" + t)
			if err != nil {
				return nil, err
			}
			out = append(out, one)
		}
		progress.Printf("%s: %d release tags (%s)", s.Raw, len(tags), strings.Join(tags, " "))
	}
	return out, nil
}

// writable checks, before any work, that reports can be written under dir:
// a run whose report cannot be written must not run at all.
func writable(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--reports %s: %v", dir, err)
	}
	f, err := os.CreateTemp(dir, ".harp-writable-*")
	if err != nil {
		return fmt.Errorf("--reports %s is not writable: %v", dir, err)
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

// commit is set by the Makefile (-ldflags -X main.commit=...): builds may
// run with -buildvcs=false, so the build info cannot be relied on.
var commit string

// harpVersion is harp's module version and the commit it was built from.
func harpVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "harp (unknown build)"
	}
	rev, dirty := "unknown", ""
	if commit != "" {
		rev = commit
	}
	for _, s := range info.Settings {
		switch {
		case s.Key == "vcs.revision" && commit == "":
			rev = s.Value
		case s.Key == "vcs.modified" && s.Value == "true":
			dirty = "+changes"
		}
	}
	return fmt.Sprintf("harp %s (commit %s%s, %s)", info.Main.Version, rev, dirty, info.GoVersion)
}

// sameDir says whether two paths are the same directory (links resolved).
func sameDir(a, b string) bool {
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ra == rb
}

// sweepRun removes what a run created, within a deadline of its own: a
// hung Docker daemon must not hang harp on its way out.
func sweepRun(ctx context.Context, docker *client.Client, runID string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	engine.SweepRun(ctx, docker, runID)
}

package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	"github.com/moby/moby/client"

	"github.com/harp-project/harp/harness/engine"
	"github.com/harp-project/harp/harness/spec"
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

// parseSpecs reads a list of build specs and checks what they name on
// this machine before any work (a missing patch, a directory that is not
// an HAProxy tree).
func parseSpecs(raw string) ([]spec.Spec, error) {
	specs, err := spec.ParseList(raw)
	if err == nil {
		err = spec.CheckAll(specs)
	}
	return specs, err
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

package main

import (
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/harp-project/harp/harness/core/fixcase"
	"github.com/harp-project/harp/harness/core/progress"
	"github.com/harp-project/harp/harness/core/spec"
	"github.com/harp-project/harp/harness/live/fixrun"
	"github.com/harp-project/harp/harness/ops/capture"
	"github.com/harp-project/harp/harness/ops/history"
	"github.com/harp-project/harp/harness/ops/report"
)

// cmdCapture records real runtime output of each build into
// DIR/<version>/, for the parser tests: show info, show proc (with an old
// worker still alive), show peers, show table, and the master's log around
// a reload and a worker crash; and what each node of a 3-node cluster says
// in the situations the doctor diagnoses (DIR/<version>/cluster/).
func cmdCapture(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("capture", flag.ContinueOnError)
	builds := fs.String("haproxy", "", "build specs (required)")
	out := fs.String("out", "", "output directory (required), e.g. fixtures/captures")
	overwrite := fs.Bool("overwrite", false, "replace captures already in --out (the committed fixtures among them)")
	clusters := fs.Bool("cluster", true, "also record 3-node cluster situations for the doctor's tests")
	facts := fs.String("facts", "", "instead: put the upstream-fix cases' facts of this run's release-tag builds into --out (default fixtures/upstream-fixes/captures), the captures the judges are tested on")
	if !flags(fs, args) {
		return 3
	}
	if *facts != "" {
		return captureFacts(*facts, cmp.Or(*out, "fixtures/upstream-fixes/captures"))
	}
	if *builds == "" || *out == "" {
		fmt.Fprintln(os.Stderr, "usage: harp capture --haproxy SPECS --out DIR [--overwrite] [--cluster=false]")
		fs.PrintDefaults()
		return 3
	}
	specs, err := parseSpecs(*builds)
	if err != nil {
		return fail("%v", err)
	}
	docker, builder, err := setup(ctx)
	if err != nil {
		return fail("%v", err)
	}
	runID := "capture-" + report.NewID()
	defer sweepRun(ctx, docker, runID)
	for _, s := range specs {
		img, err := builder.Ensure(ctx, s)
		if err != nil {
			return fail("%v", err)
		}
		dir := filepath.Join(*out, img.Version)
		// Captures are test fixtures: replacing them is asked for, never a side effect.
		if _, err := os.Stat(dir); err == nil && !*overwrite {
			return fail("capture: %s exists (captures of %s); --overwrite replaces them", dir, img.Version)
		}
		if err := capture.Node(ctx, docker, img, runID, dir); err != nil {
			return fail("capture %s: %v", img.Name, err)
		}
		cfg, err := capture.TwoSections()
		if err == nil {
			err = capture.AfterReload(ctx, docker, img, runID, cfg, []string{"first", "second"}, dir, "show-peers-3517-after-reload.txt")
		}
		if err != nil {
			return fail("capture %s (#3517 config): %v", img.Name, err)
		}
		if *clusters {
			progress.Printf("capturing %s in 3-node clusters: %v", img.Name, capture.Situations)
			if err := capture.Clusters(ctx, docker, img, runID, dir); err != nil {
				return fail("capture %s (clusters): %v", img.Name, err)
			}
		}
		progress.Printf("captured %s into %s", img.Name, dir)
	}
	return 0
}

// captureFacts puts the facts of every upstream-fix case a run holds, on
// a build of a release tag, into that tag's capture under out: a case
// already captured is replaced, a new one added, the others kept. A run
// with no such facts is an error: nothing was captured.
func captureFacts(runDir, out string) int {
	run, err := report.Load(runDir)
	if err != nil {
		return fail("capture --facts: %v", err)
	}
	names, _ := filepath.Glob(filepath.Join(out, "facts-*.json"))
	wrote := 0
	for _, r := range run.Results {
		tag := history.TagOf(r)
		if tag == "" || r.Commit == "" {
			continue
		}
		var facts []fixcase.Facts
		for _, t := range r.Trials {
			raw, err := json.Marshal(t.Evidence)
			if err != nil {
				continue
			}
			var f fixcase.Facts
			if json.Unmarshal(raw, &f) == nil && f.Case != "" && !fixrun.Unselected(f.Skip) {
				facts = append(facts, f)
			}
		}
		if len(facts) == 0 {
			continue
		}
		// The tag's capture, whatever commit its name gives; else a new one.
		// A flavour's build has a capture of its own (the asan cases apply there only).
		flavor := ""
		if s, err := spec.Parse(r.Build); err == nil {
			flavor = string(s.Flavor)
		}
		path := filepath.Join(out, fixcase.CaptureName(tag, r.Commit, flavor))
		for _, n := range names {
			if "v"+fixcase.CaptureVersion(filepath.Base(n)) == tag && fixcase.CaptureFlavor(filepath.Base(n)) == flavor {
				path = n
			}
		}
		old, err := os.ReadFile(path)
		if err != nil && !os.IsNotExist(err) {
			return fail("capture --facts: %v", err)
		}
		b, err := fixcase.MergeCaptured(old, facts)
		if err != nil {
			return fail("capture --facts: %s: %v", path, err)
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			return fail("capture --facts: %v", err)
		}
		progress.Printf("capture: %d facts of %s (%s) into %s", len(facts), r.Suite, tag, path)
		wrote++
	}
	if wrote == 0 {
		return fail("capture --facts: %s holds no upstream-fix case run on a release tag's build", runDir)
	}
	return 0
}

package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/harp-project/harp/harness/capture"
	"github.com/harp-project/harp/harness/progress"
	"github.com/harp-project/harp/harness/report"
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
	if !flags(fs, args) {
		return 3
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

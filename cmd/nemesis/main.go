// Command nemesis is the proof that harp's own faults do not bend its
// verdicts: every suite runs on builds whose true verdict is known (Cells)
// under the nemesis (harness/live/nemesis) with several seeds, one cell at a
// time; a build without the suite's bug must never be REPRODUCED, one with
// it never PASS. It prints the histogram of verdicts (make nemesis) and
// exits 1 on any bent verdict, 2 when a cell could not run.
//
//	go run ./cmd/nemesis [-seeds 1,2,3] [-suites id,...] [-sample] [-out FILE]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/harp-project/harp/harness/core/progress"
	"github.com/harp-project/harp/harness/core/suite"
	"github.com/harp-project/harp/harness/live/cache"
	"github.com/harp-project/harp/harness/live/engine"
	"github.com/harp-project/harp/harness/ops/report"
	"github.com/harp-project/harp/images"
	_ "github.com/harp-project/harp/suites/all"
)

func main() { os.Exit(run()) }

func run() int {
	seedsFlag := flag.String("seeds", "1,2,3", "nemesis seeds, comma-separated")
	suitesFlag := flag.String("suites", "", "suite ids to run (default: every cell's)")
	sample := flag.Bool("sample", false, "only the bounded sample make test runs")
	out := flag.String("out", "", "also write the histogram (Markdown) to this file")
	flag.StringVar(&evidence, "evidence", "", "write each run's result, evidence and injected faults to this directory")
	flag.Parse()
	seeds, err := parseSeeds(*seedsFlag)
	if err != nil {
		fmt.Fprintln(os.Stderr, "nemesis:", err)
		return 3
	}
	cells, err := pick(Cells, *suitesFlag, *sample)
	if err != nil {
		fmt.Fprintln(os.Stderr, "nemesis:", err)
		return 3
	}
	if os.Getenv("HARP_FLAGS_ONLY") != "" { // the make-target test (cmd/harp)
		fmt.Printf("nemesis: flags parsed: %d seeds, %d cells\n", len(seeds), len(cells))
		return 0
	}
	if evidence != "" {
		if err := os.MkdirAll(evidence, 0o755); err != nil {
			fmt.Fprintln(os.Stderr, "nemesis:", err)
			return 3
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	docker, err := engine.Connect(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "nemesis:", err)
		return 3
	}
	builder := &images.Builder{Docker: docker, Cache: cache.Dir()}
	id := "nemesis-" + report.NewID()
	defer engine.SweepRun(context.WithoutCancel(ctx), docker, id)
	var runs []Run
	for i, c := range cells {
		for _, seed := range seeds {
			if ctx.Err() != nil {
				fmt.Fprintln(os.Stderr, "nemesis: interrupted")
				return 3
			}
			progress.Printf("nemesis: cell %d of %d, seed %d: %s on %s (truth %s)", i+1, len(cells), seed, c.Suite, c.Spec, c.Truth)
			r := runCell(ctx, docker, builder, id, c, seed)
			progress.Printf("nemesis: %s on %s, seed %d: %s (%d harness faults)%s: %s", c.Suite, c.Spec, seed, r.Got, r.Faults, map[bool]string{true: " BENT", false: ""}[r.Bent()], r.Reason)
			runs = append(runs, r)
		}
	}
	md := Histogram(runs, seeds)
	fmt.Print(md)
	if *out != "" {
		if err := os.WriteFile(*out, []byte(md), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "nemesis:", err)
			return 3
		}
	}
	return ExitCode(runs)
}

func parseSeeds(v string) ([]int64, error) {
	var out []int64
	for _, f := range strings.Split(v, ",") {
		s, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("-seeds %q: %q is no integer", v, f)
		}
		out = append(out, s)
	}
	return out, nil
}

func pick(all []Cell, suites string, sample bool) ([]Cell, error) {
	var want []string
	if suites != "" {
		want = strings.Split(suites, ",")
		for _, w := range want {
			if !slices.ContainsFunc(all, func(c Cell) bool { return c.Suite == w }) {
				return nil, fmt.Errorf("no cell for suite %q", w)
			}
		}
	}
	var out []Cell
	for _, c := range all {
		if (len(want) == 0 || slices.Contains(want, c.Suite)) && (!sample || c.Sample) {
			out = append(out, c)
		}
	}
	for _, c := range out {
		if _, err := suite.Select("suite:" + c.Suite); err != nil {
			return nil, fmt.Errorf("cell %s: %w", c.Suite, err)
		}
	}
	return out, nil
}

package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/harp-project/harp/harness/bisect"
	"github.com/harp-project/harp/harness/engine"
	"github.com/harp-project/harp/harness/progress"
	"github.com/harp-project/harp/harness/report"
	"github.com/harp-project/harp/harness/runner"
	"github.com/harp-project/harp/harness/scenario"
	"github.com/harp-project/harp/harness/spec"
	"github.com/harp-project/harp/harness/verdict"
)

// cmdBisect finds the first build (Debian version or commit) where a
// suite's verdict changes. Exit status: 0 when the boundary was found, 2
// when it could not be (an end did not behave as stated, skipped builds
// hide it), 3 on errors.
func cmdBisect(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("bisect", flag.ContinueOnError)
	filter := fs.String("suite", "", "label filter selecting exactly one suite (e.g. issue:3517)")
	good := fs.String("good", "", "a build (deb: spec) or commit (with --repo) where the issue does not reproduce")
	bad := fs.String("bad", "", "a build or commit where it reproduces")
	repo := fs.String("repo", "", "bisect the commits of this local HAProxy git repository")
	findFix := fs.Bool("find-fix", false, "find the first good build after a bad one (--bad is the older end)")
	trials := fs.Int("trials", 0, "trials per step (0: the suite's default); a step is bad when any trial reproduces, good only when all pass")
	retries := fs.Int("retries", 1, "reruns of an INCONCLUSIVE step before it is skipped")
	opts := fs.String("src-options", "", "patch=FILE and make=VAR=VALUE options for every commit built, comma-separated")
	reports := fs.String("reports", "reports", "directory for reports")
	pf := paramFlags(fs)
	if !flags(fs, args) {
		return 3
	}
	if *filter == "" || *good == "" || *bad == "" {
		return fail("bisect: --suite, --good and --bad are required")
	}
	suites, err := scenario.Select(*filter)
	if err != nil {
		return fail("%v", err)
	}
	if len(suites) != 1 {
		return fail("bisect: --suite %q selects %d suites; it must select exactly one", *filter, len(suites))
	}
	suite := suites[0]
	params, err := pf.values(suites)
	if err != nil {
		return fail("%v", err)
	}
	oldEnd, newEnd := *good, *bad
	if *findFix {
		oldEnd, newEnd = *bad, *good
	}
	var srcOpts spec.Spec
	if *opts != "" {
		if srcOpts, err = spec.Parse("src:x," + *opts); err != nil {
			return fail("bisect: --src-options: %v", err)
		}
		for _, p := range srcOpts.Patches {
			if _, err := os.Stat(p); err != nil {
				return fail("bisect: patch file %s: %v", p, err)
			}
		}
	}

	docker, builder, err := setup(ctx)
	if err != nil {
		return fail("%v", err)
	}
	var cands []bisect.Candidate
	if *repo != "" {
		cands, err = bisect.GitRange(ctx, *repo, oldEnd, newEnd)
	} else {
		var a, b spec.Spec
		if a, err = spec.Parse(oldEnd); err == nil {
			if b, err = spec.Parse(newEnd); err == nil {
				m, merr := builder.Mirror(ctx)
				if merr != nil {
					return fail("%v", merr)
				}
				cands, err = bisect.DebRange(ctx, m, a, b)
			}
		}
	}
	if err != nil {
		return fail("bisect: %v", err)
	}
	run := report.Run{ID: report.NewID(), Started: time.Now(), Command: strings.Join(os.Args, " ")}
	defer engine.SweepRun(context.WithoutCancel(ctx), docker, run.ID)
	r := &runner.Runner{Docker: docker, Builder: builder, RunID: run.ID, Trials: *trials, Params: params}
	exportDir := filepath.Join(builder.Cache, "bisect")
	oracle := func(ctx context.Context, c bisect.Candidate) report.Result {
		fail := func(err error) report.Result {
			return report.Result{Suite: suite.ID, Upstream: suite.Upstream, Title: suite.Title, Build: c.SpecRaw, Name: c.Label,
				Verdict: verdict.Error, Reason: err.Error(), Noun: suite.Noun}
		}
		if c.Commit != "" {
			var err error
			if c, err = bisect.Export(ctx, *repo, exportDir, c, srcOpts); err != nil {
				return fail(err)
			}
		}
		img, err := builder.Ensure(ctx, c.Spec)
		if err != nil {
			return fail(err)
		}
		res := r.RunOne(ctx, suite, img)
		res.Name = c.Label
		run.Results = append(run.Results, res)
		return res
	}
	progress.Printf("bisect: #%s over %d builds (%s .. %s)", suite.ID, len(cands), cands[0].Label, cands[len(cands)-1].Label)
	out := bisect.Run(ctx, cands, oracle, bisect.Options{FindFix: *findFix, Retries: *retries, Logf: progress.Printf})

	md := out.Markdown(suite.ID, suite.Title)
	fmt.Print("\n" + md)
	dir, err := report.Write(*reports, run)
	if err == nil {
		data, _ := json.MarshalIndent(out, "", "  ")
		os.WriteFile(filepath.Join(dir, "bisect.json"), append(data, '\n'), 0o644)
		err = os.WriteFile(filepath.Join(dir, "bisect.md"), []byte(md), 0o644)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "harp: writing reports: %v\n", err)
	} else {
		progress.Printf("report: %s/bisect.md (steps' evidence in %s)", dir, dir)
	}
	if out.First == nil {
		return verdict.Inconclusive.ExitCode()
	}
	return 0
}

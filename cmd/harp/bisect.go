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

	"github.com/harp-project/harp/harness/core/progress"
	"github.com/harp-project/harp/harness/core/spec"
	"github.com/harp-project/harp/harness/core/suite"
	"github.com/harp-project/harp/harness/core/verdict"
	"github.com/harp-project/harp/harness/live/fixrun"
	"github.com/harp-project/harp/harness/ops/bisect"
	"github.com/harp-project/harp/harness/ops/findings"
	"github.com/harp-project/harp/harness/ops/report"
	"github.com/harp-project/harp/harness/ops/runner"
	"github.com/harp-project/harp/images"
)

// bisectArgs are cmdBisect's flags, checked.
type bisectArgs struct {
	suite           *suite.Suite
	params          map[string]string
	repo, old, new  string
	findFix, strict bool
	maxTime         time.Duration
	trials, retries int
	srcOpts         spec.Spec
	reports         string
	// finding: the signature whose own check is the oracle (not the
	// suite's whole verdict).
	finding string
}

// cmdBisect finds the first build (Debian version or commit) where a
// suite's verdict changes. Exit status: 0 when the boundary was found, 2
// when it could not be (an end did not behave as stated, skipped builds
// hide it), 3 on errors.
func cmdBisect(ctx context.Context, args []string) int {
	a, code := parseBisect(args)
	if code != 0 {
		return code
	}
	docker, builder, err := setup(ctx)
	if err != nil {
		return fail("%v", err)
	}
	cands, err := bisectRange(ctx, builder, a)
	if err != nil {
		return fail("bisect: %v", err)
	}
	run := report.Run{ID: report.NewID(), Started: time.Now(), Command: strings.Join(os.Args, " "), Harp: harpVersion()}
	defer sweepRun(ctx, docker, run.ID)
	r := &runner.Runner{Docker: docker, Builder: builder, RunID: run.ID, Trials: a.trials, Params: a.params}
	if a.finding != "" {
		progress.Printf("bisect: the oracle is finding %s (%s) alone", findings.ID(a.finding), a.finding)
	}
	progress.Printf("bisect: #%s over %d builds (%s .. %s); report: %s", a.suite.ID, len(cands), cands[0].Label, cands[len(cands)-1].Label, filepath.Join(a.reports, run.ID, "bisect.md"))
	o := bisect.Options{FindFix: a.findFix, Retries: a.retries, Strict: a.strict, Logf: progress.Printf,
		// bisect.md as it goes: an interrupted bisect leaves its table.
		OnStep: func(out bisect.Outcome) {
			out.Finding = a.finding
			if _, err := writeBisectFiles(a, run, out); err != nil {
				progress.Printf("bisect: writing the report so far: %v", err)
			}
		}}
	if a.maxTime > 0 {
		o.Deadline = time.Now().Add(a.maxTime)
	}
	out := bisect.Run(ctx, cands, bisectOracle(a, r, builder, &run), o)
	out.Finding = a.finding
	if err := writeBisect(a, run, out); err != nil {
		return fail("writing reports: %v", err) // a bisect without its report is no answer
	}
	if out.First == nil {
		return verdict.Inconclusive.ExitCode()
	}
	return 0
}

// parseBisect reads and checks the flags; code is non-zero on bad input.
func parseBisect(args []string) (a bisectArgs, code int) {
	fs := flag.NewFlagSet("bisect", flag.ContinueOnError)
	filter := fs.String("suites", "", "the suite: a label filter selecting exactly one (e.g. suite:3517)")
	renamed(fs, "suite", "suites", filter)
	good := fs.String("good", "", "a build (deb: spec) or commit (with --repo) where the issue does not reproduce")
	bad := fs.String("bad", "", "a build or commit where it reproduces")
	fs.StringVar(&a.repo, "repo", "", "bisect the commits of this local HAProxy git repository")
	fs.BoolVar(&a.findFix, "find-fix", false, "find the first good build after a bad one (--bad is the older end)")
	fs.IntVar(&a.trials, "trials", 0, "trials per step (0: the suite's default); a step is bad when any trial reproduces, good only when all pass")
	fs.IntVar(&a.retries, "retries", 1, "reruns of an INCONCLUSIVE step before it is skipped (only while its reason may be transient: not lasting, not the same again)")
	fs.BoolVar(&a.strict, "strict", false, "classify steps by verdicts only, ignoring the weak observations a suite trusts when a precondition is unmet")
	fs.DurationVar(&a.maxTime, "max-time", 0, "stop after this long and answer with the range left (\"the first bad is one of these N\"); 0: no limit")
	opts := fs.String("src-options", "", "patch=FILE and make=VAR=VALUE options for every commit built, comma-separated")
	fs.StringVar(&a.reports, "reports", "reports", "directory for reports")
	finding := fs.String("finding", "", "a finding's signature or id (harp findings): its own check is the oracle, not the suite's verdict")
	pf := paramFlags(fs)
	if !flags(fs, args) {
		return a, 3
	}
	if *finding != "" {
		sig, err := findingSignature(*finding, a.reports)
		if err != nil {
			return a, fail("bisect: --finding: %v", err)
		}
		a.finding = sig
		if suite := findings.SuiteOf(sig); suite != "" {
			if *filter == "" {
				*filter = "suite:" + suite
			}
		} else if *filter == "" {
			return a, fail("bisect: --finding %s is a crash, which any suite may meet: --suites names the one to run", sig)
		}
	}
	if *filter == "" || *good == "" || *bad == "" {
		return a, fail("bisect: --suites (or --finding), --good and --bad are required")
	}
	suites, err := suite.Select(*filter)
	if err != nil {
		return a, fail("%v", err)
	}
	if len(suites) != 1 {
		return a, fail("bisect: --suites %q selects %d suites; it must select exactly one", *filter, len(suites))
	}
	a.suite = suites[0]
	if want := findings.SuiteOf(a.finding); want != "" && want != a.suite.ID {
		return a, fail("bisect: --finding %s is suite %s's, but --suites selects %s", a.finding, want, a.suite.ID)
	}
	if err := checkFindingCheck(a.finding, a.reports); err != nil {
		return a, fail("bisect: --finding %s: %v", a.finding, err)
	}
	if err := checkTrials(fs, a.trials); err != nil {
		return a, fail("bisect: %v", err)
	}
	if a.retries < 0 || a.retries > 10 {
		return a, fail("bisect: --retries %d: want 0 to 10", a.retries)
	}
	if a.maxTime < 0 {
		return a, fail("bisect: --max-time %s: want a positive duration", a.maxTime)
	}
	if err := writable(a.reports); err != nil {
		return a, fail("bisect: %v", err)
	}
	if a.params, err = pf.values(suites); err != nil {
		return a, fail("%v", err)
	}
	// A finding that is one case of an upstream-fixes suite: each step
	// runs that case alone (unless CASES was given).
	if _, check, ok := strings.Cut(a.finding, "/"); ok && findings.SuiteOf(a.finding) != "" && hasParam(a.suite, fixrun.CasesParam) {
		if _, given := a.params[fixrun.CasesParam]; !given {
			if a.params == nil {
				a.params = map[string]string{}
			}
			a.params[fixrun.CasesParam] = check
			progress.Printf("bisect: each step runs case %s alone (%s=%s)", check, fixrun.CasesParam, check)
		}
	}
	a.old, a.new = *good, *bad
	if a.findFix {
		a.old, a.new = *bad, *good
	}
	if *opts != "" {
		if a.srcOpts, err = spec.Parse("src:x," + *opts); err != nil {
			return a, fail("bisect: --src-options: %v", err)
		}
		for _, p := range a.srcOpts.Patches {
			if err := spec.CheckPatch(p); err != nil {
				return a, fail("bisect: %v", err)
			}
		}
	}
	return a, 0
}

// bisectRange lists the candidates: commits of the repository, or the
// Debian builds the mirror serves between the ends.
func bisectRange(ctx context.Context, builder *images.Builder, a bisectArgs) ([]bisect.Candidate, error) {
	if a.repo != "" {
		return bisect.GitRange(ctx, a.repo, a.old, a.new)
	}
	old, err := spec.Parse(a.old)
	if err != nil {
		return nil, err
	}
	nw, err := spec.Parse(a.new)
	if err != nil {
		return nil, err
	}
	m, err := builder.Mirror(ctx)
	if err != nil {
		return nil, err
	}
	return bisect.DebRange(ctx, m, old, nw)
}

// bisectOracle builds a candidate (exporting a commit first) and runs the
// suite on it; every result goes into the run's report.
func bisectOracle(a bisectArgs, r *runner.Runner, builder *images.Builder, run *report.Run) func(context.Context, bisect.Candidate) report.Result {
	exportDir := filepath.Join(builder.Cache, "bisect")
	s := a.suite
	return func(ctx context.Context, c bisect.Candidate) report.Result {
		fail := func(err error) report.Result {
			return report.Result{Suite: s.ID, Upstream: s.Upstream, Title: s.Title, Build: c.SpecRaw, Name: c.Label,
				Verdict: verdict.Error, Reason: err.Error(), Noun: s.Noun}
		}
		if c.Commit != "" {
			var err error
			if c, err = bisect.Export(ctx, a.repo, exportDir, c, a.srcOpts); err != nil {
				return fail(err)
			}
		}
		img, err := builder.Ensure(ctx, c.Spec)
		if err != nil {
			return fail(err)
		}
		res := r.RunOne(ctx, s, img)
		res.Name = c.Label
		run.Results = append(run.Results, res)
		if a.finding != "" {
			// The step is judged by the finding's check alone; the
			// report keeps the suite's own verdict.
			res.Verdict, res.Reason = findings.Verdict(res, a.finding)
			if res.Verdict != verdict.Inconclusive {
				res.Weak, res.Lasting = "", false
			}
		}
		return res
	}
}

// writeBisect prints bisect.md and writes it, bisect.json and the steps'
// evidence into the run directory.
func writeBisect(a bisectArgs, run report.Run, out bisect.Outcome) error {
	fmt.Print("\n" + out.Markdown(bisectTitle(a)))
	dir, err := writeBisectFiles(a, run, out)
	if err == nil {
		progress.Printf("report: %s/bisect.md (steps' evidence in %s)", dir, dir)
	}
	return err
}

// writeBisectFiles writes the run's report with bisect.md and bisect.json
// (after every step, and at the end).
func writeBisectFiles(a bisectArgs, run report.Run, out bisect.Outcome) (string, error) {
	dir, err := report.Write(a.reports, run)
	if err != nil {
		return "", err
	}
	data, err := json.MarshalIndent(out, "", "  ")
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, "bisect.json"), append(data, '\n'), 0o644)
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, "bisect.md"), []byte(out.Markdown(bisectTitle(a))), 0o644)
	}
	return dir, err
}

// findingSignature is the signature --finding names: itself, or the one
// whose id (or id prefix) it is in the ledger under reports.
func findingSignature(name, reports string) (string, error) {
	if !strings.HasPrefix(name, "F-") {
		return name, nil
	}
	fs, err := ledger(reports)
	if err != nil {
		return "", fmt.Errorf("%s is a finding id, looked up under --reports: %v", name, err)
	}
	f, err := findings.Find(fs, name)
	return f.Signature, err
}

// checkFindingCheck refuses, before any build, a finding whose check no
// run under reports recorded for its suite: a misspelt id would build and
// run every step before the oracle could say it never saw that check.
func checkFindingCheck(sig, reports string) error {
	if sig == "" || findings.SuiteOf(sig) == "" || !strings.Contains(sig, "/") {
		return nil // no finding, a crash, or a suite's property: no check id
	}
	runs, err := findings.Scan(reports)
	if err != nil {
		return fmt.Errorf("its check cannot be confirmed before building: %v (give --reports where the suite's runs are)", err)
	}
	return findings.CheckKnown(runs, sig)
}

// bisectTitle is what bisect.md says was bisected: the suite, or the one
// finding of it whose check was the oracle.
func bisectTitle(a bisectArgs) (id, title string) {
	if a.finding != "" {
		return a.suite.ID, fmt.Sprintf("%s, finding %s %s (its own check was the oracle)", a.suite.Title, findings.ID(a.finding), a.finding)
	}
	return a.suite.ID, a.suite.Title
}

// hasParam says whether a suite declares a parameter.
func hasParam(s *suite.Suite, name string) bool {
	for _, p := range s.Params {
		if p.Name == name {
			return true
		}
	}
	return false
}

// Command harp runs HAProxy issue suites against real builds and says, per
// suite and build, whether the issue reproduced.
//
// Exit status of `harp run`: 0 PASS, 1 REPRODUCED, 2 INCONCLUSIVE, 3 ERROR
// (the worst over all suites and builds).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/moby/moby/client"

	"github.com/harp-project/harp/harness/core/progress"
	"github.com/harp-project/harp/harness/core/spec"
	"github.com/harp-project/harp/harness/core/suite"
	"github.com/harp-project/harp/harness/core/verdict"
	"github.com/harp-project/harp/harness/live/cache"
	"github.com/harp-project/harp/harness/live/child"
	"github.com/harp-project/harp/harness/live/engine"
	"github.com/harp-project/harp/harness/live/helper"
	"github.com/harp-project/harp/harness/live/owner"
	"github.com/harp-project/harp/harness/ops/findings"
	"github.com/harp-project/harp/harness/ops/report"
	"github.com/harp-project/harp/harness/ops/runner"
	"github.com/harp-project/harp/images"
	_ "github.com/harp-project/harp/suites/all"
)

const usage = `harp: regression and conformance harness for real HAProxy builds

  harp run     --suites FILTER --haproxy SPECS [--trials N] [--param NAME=VALUE]... [--reports DIR]
  harp matrix  --haproxy SPECS --suites FILTER [--jobs N] [--shard i/n] [--param NAME=VALUE]... [--reports DIR]
  harp merge   [--reports DIR] RUN-DIR...   merge shard outputs into one report
  harp nightly [--haproxy SPECS] [--debian=false] [--suites FILTER] [--jobs N] [--param NAME=VALUE]... [--reports DIR] [--keep N]
               [--bisect-budget D] [--shard i/n]
               every build the Debian mirror serves and the --haproxy ones (git heads: git:CLONE@origin/master,
               fetched first), compared with the previous nightly; a head that regressed is bisected between
               the two nights' commits; only the newest N nightly runs (14) keep their evidence directories
  harp report  --issue N | --property conf-ID [--run DIR] [--out FILE] [--post owner/repo#N]
               Markdown for the upstream issue from a run (posted with GITHUB_TOKEN)
  harp bisect  --suites FILTER --good SPEC|REF --bad SPEC|REF [--repo DIR] [--find-fix]
               [--trials N] [--retries N] [--src-options patch=F,make=V=X]
               first bad (or, with --find-fix, first good) Debian build or commit
  harp doctor  --socket PATH|HOST:PORT ... [--name N ...] [--json]
               diagnose stick-table replication between live instances
  harp doctor  --watch [--listen ADDR] [--interval D] --socket ... [--name N ...]
               the same every interval, served as /metrics (Prometheus), /healthz and a status page
  harp images  --haproxy SPECS          build (or find) the images, print their tags
  harp builds                           HAProxy builds the Debian mirror serves
  harp suites  [--markdown | --readme FILE]
               registered suites: id, title, labels, trials, parameters, steps
  harp capture --haproxy SPECS --out DIR record runtime output for parser tests
  harp fuzz    peers --haproxy SPEC [--duration D] [--seed S] [--reports DIR]
               mutated peers message streams to the peer port; a finding is minimized
  harp fuzz    replay FILE --haproxy SPEC   send a finding again
  harp chaos   --haproxy SPEC [--nodes N] [--duration D] [--seed S] [--faults K,...] [--count N] [--failfast]
               randomized peers histories under faults, judged by the checker
  harp findings [--reports DIR] [--json]   every finding (failed check, crash) over the runs, deduplicated
  harp findings mark SIG STATUS [REF]     reported owner/repo#N | fixed-in VERSION | not-haproxy | wontfix
  harp findings repro SIG --reports DIR --out DIR   a standalone reproducer (sh + socat, or Python 3)
  harp rejudge RUNDIR | history.json    judge stored chaos histories again (was harp check)
  harp history --repo CLONE [--since v2.6.0] [--head REF] [--reports DIR,...] [--out FILE] [--json]
               upstream's BUG/ fixes as harp's scoreboard (docs/upstream-bugs.md)
  harp scoreboard --repo CLONE [--trials 3] [--shard i/n] [--phase releases|commits|doc|all] [--fixes IDS] [--plan]
               every check rerun by this harp on its fix's bad and fixed releases (then the fix's parent and the
               fix where the releases did not catch it), trials times, resumable; writes docs/upstream-bugs.md
  harp reg-tests export [--dir reg-tests]
               the upstream-fix checks as HAProxy reg-tests (VTest .vtc files, upstream's layout) and
               their manifest; the cases VTest cannot express are listed there with why
  harp reg-tests run --haproxy SPECS [--dir reg-tests] [--compare RUN-DIR [--record]]
               every reg-test on each build, in its image with a runner (Debian's varnishtest, or
               HARP_VTEST=/path/to/vtest); exits 0 when every result is the one the manifest expects
  harp reg-tests minimize --vtc FILE --bad SPEC --good SPEC [--out FILE] [--max-runs 300]
               a finding's reg-test reduced by delta debugging: comments, statements and lines removed
               one at a time while it still FAILS on --bad (for the same reason) and passes on --good
  harp sweep   [--all]                  remove containers left by killed runs
  harp version                          harp's version and commit (also in every summary.json)

SPECS: one or more of (separated by spaces or ';')
  deb:latest  deb:<release>  deb:<debian-version>  deb:<upstream-version>
  src:<dir|tarball|URL|deb:VERSION>[,patch=FILE]...[,make=VAR=VALUE]...[,flavor=minimal|full|asan|nothreads]
  git:<clone>@<ref>[,patch=...][,flavor=...]   git:<clone>@vA.B.C..vX.Y.Z (matrix)
  image:<reference>[,bin=/path]   bin:<path>
`

func main() {
	// In its helper images, harp's own binary is the link proxy or the
	// slow backend, by the name it is started as.
	helper.Run()
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(3)
	}
	ctx, stop := interrupts()
	defer stop()
	mainCtx = ctx
	var code int
	switch os.Args[1] {
	case "run":
		code = cmdRun(ctx, os.Args[2:])
	case "images":
		code = cmdImages(ctx, os.Args[2:])
	case "scoreboard":
		code = cmdScoreboard(ctx, os.Args[2:])
	case "matrix":
		code = cmdMatrix(ctx, os.Args[2:])
	case "merge":
		code = cmdMerge(os.Args[2:])
	case "doctor":
		code = cmdDoctor(ctx, os.Args[2:])
	case "bisect":
		code = cmdBisect(ctx, os.Args[2:])
	case "report":
		code = cmdReport(ctx, os.Args[2:])
	case "nightly":
		code = cmdNightly(ctx, os.Args[2:])
	case "builds":
		code = cmdBuilds(ctx)
	case "suites":
		code = cmdSuites(os.Args[2:])
	case "capture":
		code = cmdCapture(ctx, os.Args[2:])
	case "sweep":
		code = cmdSweep(ctx, os.Args[2:])
	case "fuzz":
		code = cmdFuzz(ctx, os.Args[2:])
	case "chaos":
		code = cmdChaos(ctx, os.Args[2:])
	case "findings":
		code = cmdFindings(ctx, os.Args[2:])
	case "rejudge":
		code = cmdRejudge(os.Args[2:])
	case "check": // its old name: "check" is a verdict's named unit in harp's words
		fmt.Fprintln(os.Stderr, "harp check is now harp rejudge; the old name will go away")
		code = cmdRejudge(os.Args[2:])
	case "reg-tests":
		code = cmdRegTests(ctx, os.Args[2:])
	case "history":
		code = cmdHistory(ctx, os.Args[2:])
	case "-h", "--help", "help":
		fmt.Print(usage)
	case "version", "--version":
		fmt.Println(harpVersion())
	default:
		fmt.Fprintf(os.Stderr, "harp: unknown command %q\n\n%s", os.Args[1], usage)
		code = 3
	}
	if helpAsked {
		code = 0
	}
	os.Exit(code)
}

// gitBisectMode is set by `harp run --git-bisect`: then even an abort exits
// as skip (125), never as bad.
var gitBisectMode bool

// exitFor is a run's exit status: the verdict's, or for `git bisect run`
// its good/bad/skip code.
func exitFor(gitBisect bool, v verdict.Verdict) int {
	if gitBisect {
		return v.GitBisectCode()
	}
	return v.ExitCode()
}

// failV says what went wrong and gives ERROR; after an interrupt, that
// it was interrupted (what the interrupt cut short says "context canceled").
func failV(format string, args ...any) verdict.Verdict {
	msg := clean(fmt.Sprintf(format, args...))
	if mainCtx != nil {
		msg = runner.Stopped(mainCtx, errors.New(msg)).Error()
	}
	fmt.Fprintln(os.Stderr, "harp: "+msg)
	return verdict.Error
}

// mainCtx is the context interrupts cancels.
var mainCtx context.Context

// ansi matches terminal escape sequences: compiler and library output
// sometimes carries them into error texts.
var ansi = regexp.MustCompile(`\x1b\[[0-9;?]*[A-Za-z]`)

func clean(s string) string { return ansi.ReplaceAllString(s, "") }

func fail(format string, args ...any) int {
	failV(format, args...)
	return verdict.Error.ExitCode()
}

// helpAsked is set when a command was asked for its usage (-h): the
// process then exits 0, having done what was asked.
var helpAsked bool

// flags parses a command's flags; usage errors exit 3 (ERROR), never
// 0 or 2, which a caller would read as PASS or INCONCLUSIVE.
func flags(fs *flag.FlagSet, args []string) bool {
	fs.SetOutput(os.Stderr)
	if err := fs.Parse(args); err != nil {
		helpAsked = errors.Is(err, flag.ErrHelp)
		return false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "harp %s: unexpected argument %q (build specs go in --haproxy)\n", fs.Name(), fs.Arg(0))
		return false
	}
	flagsOnly(fs)
	return true
}

// flagsOnly ends the process once the flags parsed when HARP_FLAGS_ONLY is
// set: how a test runs every make target with its defaults and sees the
// command line it gives harp is valid, without the work behind it.
func flagsOnly(fs *flag.FlagSet) {
	if os.Getenv("HARP_FLAGS_ONLY") == "" {
		return
	}
	var set []string
	fs.Visit(func(f *flag.Flag) { set = append(set, fmt.Sprintf("--%s=%q", f.Name, f.Value.String())) })
	fmt.Printf("harp %s: flags parsed: %s\n", fs.Name(), strings.Join(set, " "))
	os.Exit(0)
}

// setup connects to Docker, sweeps what dead runs left and makes a builder.
// tempPrefixes are the temporary files and directories harp makes (see
// owner.TempPrefix).
var tempPrefixes = []string{"harp-local-", "deb-", "bin-", "backend-"}

func setup(ctx context.Context) (*client.Client, *images.Builder, error) {
	docker, err := engine.Connect(ctx)
	if err != nil {
		return nil, nil, err
	}
	// What killed runs left: containers and networks, temporary files,
	// compilers and local HAProxy processes still running.
	if n, err := engine.Sweep(ctx, docker, false); err != nil {
		progress.Printf("sweeping what killed runs left: %v (harp sweep --all removes it)", err)
	} else if n > 0 {
		progress.Printf("swept %d container(s)/network(s) left by killed runs", n)
	}
	if err := os.MkdirAll(cache.Dir(), 0o755); err != nil {
		return nil, nil, err
	}
	if gone := owner.SweepTemp(tempPrefixes, os.TempDir(), cache.Dir()); len(gone) > 0 {
		progress.Printf("removed %d temporary file(s) left by killed runs", len(gone))
	}
	if killed := child.SweepOrphans(); len(killed) > 0 {
		progress.Printf("killed %d process(es) left running by killed runs: %v", len(killed), killed)
	}
	return docker, &images.Builder{Docker: docker, Cache: cache.Dir()}, nil
}

func cmdRun(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	rf := newRunFlags(fs, "reports", false, "")
	builds := fs.String("haproxy", "deb:latest", "build specs")
	cpus := fs.Float64("cpus", 0, "limit every HAProxy container to this share of CPU time (e.g. 0.3), to see how verdicts hold on a starved HAProxy")
	gitBisect := fs.Bool("git-bisect", false, "exit as `git bisect run` reads it: 0 PASS, 1 REPRODUCED, 125 (skip) INCONCLUSIVE or ERROR")
	if !flags(fs, args) {
		return exitFor(*gitBisect, verdict.Error)
	}
	gitBisectMode = *gitBisect
	if err := checkCPUs(*cpus); err != nil {
		return exitFor(*gitBisect, failV("run: %v", err))
	}
	sel, err := rf.check("run", true)
	if err != nil {
		return exitFor(*gitBisect, failV("%v", err))
	}
	suites, params, trials, reports := sel.suites, sel.params, rf.trials, rf.reports
	specs, err := parseSpecs(*builds)
	if err != nil {
		return exitFor(*gitBisect, failV("%v", err))
	}
	docker, builder, err := setup(ctx)
	if err != nil {
		return exitFor(*gitBisect, failV("%v", err))
	}
	run := report.Run{ID: report.NewID(), Started: time.Now(), Command: strings.Join(os.Args, " "), Harp: harpVersion()}
	defer sweepRun(ctx, docker, run.ID)
	r := &runner.Runner{Docker: docker, Builder: builder, RunID: run.ID, Trials: *trials, Params: params, CPUs: *cpus}
	run.Results = r.Run(ctx, suites, specs)
	v := outcome(*reports, run)
	if *gitBisect && v != verdict.Error {
		// A bisect hunts the suite's property: a crash elsewhere on every
		// commit must not mark each one bad (the crash row still says it).
		v = verdict.Pass
		for _, res := range report.WithoutCrashRows(run.Results) {
			v = verdict.Worst(v, res.Verdict)
		}
	}
	return exitFor(*gitBisect, v)
}

// selectSuites applies a label filter; an empty one selects every suite.
func selectSuites(filter string) ([]*suite.Suite, error) {
	if filter == "" {
		return suite.All(), nil
	}
	return suite.Select(filter)
}

// cmdMatrix runs every selected suite on every build (or one shard of
// those cells), several builds at a time, and shows the matrix.
func cmdMatrix(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("matrix", flag.ContinueOnError)
	rf := newRunFlags(fs, "reports", true, "run shard i of n of the cells (i/n)")
	builds := fs.String("haproxy", "deb:latest", "build specs")
	renamed(fs, "builds", "haproxy", builds)
	if !flags(fs, args) {
		return 3
	}
	sel, err := rf.check("matrix", false)
	if err != nil {
		return fail("%v", err)
	}
	suites, params, jobs, reports, filter := sel.suites, sel.params, rf.jobs, rf.reports, &rf.filter
	specs, err := parseSpecs(*builds)
	if err != nil {
		return fail("%v", err)
	}
	i, n := sel.shard[0], sel.shard[1]
	all := runner.Cells(suites, specs)
	cells := report.Shard(all, i, n)
	if len(cells) == 0 {
		return fail("matrix: shard %d/%d of %d cells selects none: use at most %d shards", i, n, len(all), len(all))
	}
	docker, builder, err := setup(ctx)
	if err != nil {
		return fail("%v", err)
	}
	run := report.Run{ID: report.NewID(), Started: time.Now(), Command: strings.Join(os.Args, " "), Harp: harpVersion(),
		Shard: fmt.Sprintf("%d/%d", i, n), Cells: len(all), Matrix: matrixIdentity(specs, *filter, suites, params, *rf.trials)}
	defer sweepRun(ctx, docker, run.ID)
	progress.Printf("matrix: %d cells (shard %d/%d), %d builds at a time", len(cells), i, n, *jobs)
	r := &runner.Runner{Docker: docker, Builder: builder, RunID: run.ID, Params: params, Trials: *rf.trials}
	run.Results = r.RunCells(ctx, cells, *jobs)
	return finish(*reports, run)
}

// matrixIdentity is what a merge compares between shards (report.Identity).
func matrixIdentity(specs []spec.Spec, filter string, suites []*suite.Suite, params map[string]string, trials int) *report.Identity {
	var builds, ids []string
	for _, s := range specs {
		builds = append(builds, s.Raw)
	}
	for _, s := range suites {
		ids = append(ids, s.ID)
	}
	return report.NewIdentity(builds, filter, ids, params, trials)
}

// cmdNightly runs every suite on the haproxy build each Debian release
// installs now (found now, not listed by hand) plus extra specs, and lists
// what changed since the previous nightly.
func cmdNightly(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("nightly", flag.ContinueOnError)
	rf := newRunFlags(fs, "reports/nightly", true, "run shard i of n of the cells (i/n); each shard compares with its own previous nightly in --reports")
	extra := fs.String("haproxy", "", "build specs beside Debian's (the only ones with --debian=false: git heads, say)")
	renamed(fs, "extra", "haproxy", extra)
	keep := fs.Int("keep", 14, "nightly runs whose evidence directories are kept (older ones keep summary.json and their reports)")
	debian := fs.Bool("debian", true, "test every build the Debian mirror serves (--debian=false: only --haproxy, e.g. git heads)")
	budget := fs.Duration("bisect-budget", 45*time.Minute, "time for bisecting the git heads that regressed since the previous nightly (0: none)")
	if !flags(fs, args) {
		return 3
	}
	if err := report.CheckKeep(*keep); err != nil {
		return fail("nightly: %v", err)
	}
	if *budget < 0 {
		return fail("nightly: --bisect-budget %s: want 0 or more", *budget)
	}
	sel, err := rf.check("nightly", false)
	if err != nil {
		return fail("%v", err)
	}
	suites, params, jobs, reports, trials, filter := sel.suites, sel.params, rf.jobs, rf.reports, rf.trials, &rf.filter
	si, sn := sel.shard[0], sel.shard[1]
	var specs []spec.Spec
	if strings.TrimSpace(*extra) != "" {
		if specs, err = parseSpecs(*extra); err != nil {
			return fail("%v", err)
		}
	}
	if !*debian && len(specs) == 0 {
		return fail("nightly: --debian=false and no --haproxy builds: nothing to test is no pass")
	}
	docker, builder, err := setup(ctx)
	if err != nil {
		return fail("%v", err)
	}
	var debs []spec.Spec
	if *debian {
		if debs, err = debianBuilds(ctx, builder); err != nil {
			return fail("%v", err)
		}
	}
	// Heads are fetched first: tonight's commit is the one each cell
	// remembers (report.Result.Commit) and tomorrow compares with.
	notes := fetchHeads(ctx, specs)
	specs = append(debs, specs...)
	all := runner.Cells(suites, specs)
	cells := report.Shard(all, si, sn)
	if len(cells) == 0 {
		return fail("nightly: shard %d/%d of %d cells selects none: use at most %d shards", si, sn, len(all), len(all))
	}
	run := report.Run{ID: report.NewID(), Started: time.Now(), Command: strings.Join(os.Args, " "), Harp: harpVersion(), Notes: notes,
		Shard: fmt.Sprintf("%d/%d", si, sn), Cells: len(all), Matrix: matrixIdentity(specs, *filter, suites, params, *trials)}
	defer sweepRun(ctx, docker, run.ID)
	progress.Printf("nightly: %d suites on %d builds (%d what the Debian releases install): %d cells (shard %d/%d)", len(suites), len(specs), len(debs), len(cells), si, sn)
	r := &runner.Runner{Docker: docker, Builder: builder, RunID: run.ID, Params: params, Trials: *trials}
	run.Results = r.RunCells(ctx, cells, *jobs)
	if prev, ok := report.Previous(*reports, run.ID); ok {
		// A head that regressed is bisected between last night's commit
		// and tonight's: the change names the first bad commit.
		run.Since, run.Changes = prev.ID, report.Compare(prev.Results, run.Results)
		bisectRegressions(ctx, r, builder, &run, prev.Results, suites, params, *reports, *budget)
		sinceLastNight(&run, prev)
	}
	v := report.NightlyVerdict(outcome(*reports, run), run.Changes)
	pruneNights(*reports, *keep, run.ID)
	return v.ExitCode()
}

// debianBuilds are what apt on each Debian release installs now (a
// -security or -updates build over the release's own): the builds people
// run, each once.
func debianBuilds(ctx context.Context, builder *images.Builder) ([]spec.Spec, error) {
	m, err := builder.Mirror(ctx)
	if err != nil {
		return nil, err
	}
	var debs []spec.Spec
	seen := map[string]bool{}
	for _, release := range spec.DebReleases {
		b, err := m.Resolve(ctx, release)
		if err != nil || seen[b.Version] {
			continue // a release that serves no haproxy (or the same build)
		}
		seen[b.Version] = true
		s, _ := spec.Parse("deb:" + b.Version)
		debs = append(debs, s)
	}
	if len(debs) == 0 {
		return nil, fmt.Errorf("nightly: the Debian mirror %s serves no haproxy build: nothing to test is no pass", m.URL)
	}
	return debs, nil
}

// sinceLastNight prints the cells that changed since the previous night,
// and the findings that moved: a cell that stays REPRODUCED can still
// gain or lose a bug.
func sinceLastNight(run *report.Run, prev report.Run) {
	fmt.Printf("\nchanges since %s: %d\n", prev.ID, len(run.Changes))
	for _, c := range run.Changes {
		fmt.Println("  " + c.String())
	}
	for _, c := range findings.Changes(prev.Results, run.Results) {
		run.FindingChanges = append(run.FindingChanges, c.String())
	}
	fmt.Printf("findings that moved: %d\n", len(run.FindingChanges))
	for _, c := range run.FindingChanges {
		fmt.Println("  " + c)
	}
}

// pruneNights keeps disk use bounded: older runs keep their summaries and
// reports (what history and comparisons read), not their evidence. Only
// once this run is written: a night without its report prunes nothing.
func pruneNights(reports string, keep int, id string) {
	if _, err := os.Stat(filepath.Join(reports, id, "summary.json")); err != nil {
		return
	}
	pruned, err := report.Prune(reports, keep, id, time.Now())
	if len(pruned) > 0 {
		progress.Printf("nightly: removed the evidence of %d older runs (--keep %d): %s", len(pruned), keep, strings.Join(pruned, " "))
	}
	if err != nil {
		// A finding stays the exit status; the disk is said to fill.
		fmt.Fprintf(os.Stderr, "harp: nightly: removing older runs' evidence: %v\n", err)
	}
}

// cmdMerge merges shard run directories into one run.
func cmdMerge(args []string) int {
	fs := flag.NewFlagSet("merge", flag.ContinueOnError)
	reports := fs.String("reports", "reports", "directory for the merged report")
	fs.SetOutput(os.Stderr)
	if err := fs.Parse(args); err != nil || fs.NArg() == 0 {
		helpAsked = errors.Is(err, flag.ErrHelp)
		return fail("merge: give the shard run directories")
	}
	// The same shard twice (or reports/latest beside the run it points
	// at) would count its cells twice: refused, never silently merged.
	dirs := fs.Args()
	for i := range dirs {
		for j := range i {
			if sameDir(dirs[i], dirs[j]) {
				return fail("merge: %s and %s are the same run directory", dirs[j], dirs[i])
			}
		}
	}
	if err := writable(*reports); err != nil {
		return fail("merge: %v", err)
	}
	run, err := report.Merge(report.NewID(), dirs)
	if err != nil {
		return fail("%v", err)
	}
	run.Harp = harpVersion()
	return finish(*reports, run)
}

// finish prints the matrix, writes the reports and returns the exit code.
func finish(reports string, run report.Run) int { return outcome(reports, run).ExitCode() }

// outcome prints the matrix, writes the reports and gives the verdict of
// the whole run: the worst cell's, or ERROR when the reports could not be
// written (a run without its report is no answer).
func outcome(reports string, run report.Run) verdict.Verdict {
	fmt.Print("\n" + report.Matrix(run.Results, false))
	dir, err := report.Write(reports, run)
	if err != nil {
		fmt.Fprintf(os.Stderr, "harp: writing reports: %v\n", err)
		return verdict.Error
	}
	progress.Printf("report: %s/report.md, %s/junit.xml", dir, dir)
	if len(run.Results) == 0 {
		fmt.Fprintln(os.Stderr, "harp: no suite ran on any build: nothing is no pass")
		return verdict.Error
	}
	var vs []verdict.Verdict
	for _, res := range run.Results {
		vs = append(vs, res.Verdict)
	}
	return verdict.Worst(vs...)
}

func cmdImages(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("images", flag.ContinueOnError)
	builds := fs.String("haproxy", "deb:latest", "build specs")
	if !flags(fs, args) {
		return 3
	}
	specs, err := parseSpecs(*builds)
	if err != nil {
		return fail("%v", err)
	}
	_, builder, err := setup(ctx)
	if err != nil {
		return fail("%v", err)
	}
	code := 0
	for _, s := range specs {
		img, err := builder.Ensure(ctx, s)
		if err != nil {
			fmt.Fprintf(os.Stderr, "harp: %v\n", runner.Stopped(ctx, err))
			code = 3
			continue
		}
		fmt.Printf("%s\t%s\t%s\n", s.Raw, img.Name, img.Tag)
	}
	return code
}

func cmdBuilds(ctx context.Context) int {
	b := &images.Builder{Cache: cache.Dir()}
	m, err := b.Mirror(ctx)
	if err != nil {
		return fail("%v", err)
	}
	bs, err := m.Builds(ctx)
	if err != nil {
		return fail("%v", err)
	}
	for _, x := range bs {
		fmt.Printf("deb:%s\t%s\n", x.Version, x.FromPocket())
	}
	return 0
}

func cmdSweep(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("sweep", flag.ContinueOnError)
	all := fs.Bool("all", false, "remove every harp container and network, even of live runs")
	if !flags(fs, args) {
		return 3
	}
	docker, err := engine.Connect(ctx)
	if err != nil {
		return fail("%v", err)
	}
	n, err := engine.Sweep(ctx, docker, *all)
	if err != nil {
		return fail("%v", err)
	}
	files := owner.SweepTemp(tempPrefixes, os.TempDir(), cache.Dir())
	procs := child.SweepOrphans()
	fmt.Printf("removed %d container(s)/network(s) and %d temporary file(s), killed %d process(es) left by killed runs\n", n, len(files), len(procs))
	return 0
}

// interrupts cancels the context at the first SIGINT, SIGTERM or SIGHUP,
// so the run stops and cleans up; a second one ends harp at once (what it
// leaves is swept by the next harp), and cleanup has its own deadline.
func interrupts() (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		s := <-sig
		fmt.Fprintf(os.Stderr, "harp: %v: stopping and cleaning up (again to quit at once)\n", s)
		cancel(fmt.Errorf("interrupted (%s)", signalName(s)))
		select {
		case s = <-sig:
			fmt.Fprintf(os.Stderr, "harp: %v again: quitting; the next harp removes what is left\n", s)
		case <-time.After(cleanupDeadline):
			fmt.Fprintf(os.Stderr, "harp: cleanup took more than %s: quitting; the next harp removes what is left\n", cleanupDeadline)
		}
		os.Exit(exitFor(gitBisectMode, verdict.Error))
	}()
	return ctx, func() { signal.Stop(sig); cancel(nil) }
}

// signalName is a signal as a user sends it (kill -INT, Ctrl-C).
func signalName(s os.Signal) string {
	if n, ok := map[os.Signal]string{os.Interrupt: "SIGINT", syscall.SIGTERM: "SIGTERM", syscall.SIGHUP: "SIGHUP"}[s]; ok {
		return n
	}
	return s.String()
}

// cleanupDeadline bounds how long harp cleans up after an interrupt.
const cleanupDeadline = 60 * time.Second

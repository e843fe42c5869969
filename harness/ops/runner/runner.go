// Package runner runs selected suites on selected builds: it makes the
// images, runs each suite, decides its verdict and prints the verdict line.
package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/moby/moby/client"

	"github.com/harp-project/harp/harness/core/progress"
	"github.com/harp-project/harp/harness/core/spec"
	"github.com/harp-project/harp/harness/core/suite"
	"github.com/harp-project/harp/harness/core/verdict"
	"github.com/harp-project/harp/harness/live/node"
	"github.com/harp-project/harp/harness/live/suiteenv"
	"github.com/harp-project/harp/harness/ops/report"
	"github.com/harp-project/harp/images"
)

// Runner holds what every suite run needs.
type Runner struct {
	Docker  *client.Client
	Builder *images.Builder
	RunID   string
	Trials  int // 0: each suite's default
	// Params are suite parameters by name (NODES=5), checked against the
	// selected suites before the run (suite.CheckParams).
	Params map[string]string
	// CPUs limits every HAProxy container to a share of CPU time (0: none).
	CPUs float64
	// Local runs nodes as local processes (src: and bin: builds only): the
	// baseline that `make bench` compares containers against.
	Local bool
}

// Cell is one suite on one build.
type Cell struct {
	Suite *suite.Suite
	Build spec.Spec
}

// Cells lists every suite on every build, builds first: the order shards
// are cut from.
func Cells(suites []*suite.Suite, specs []spec.Spec) []Cell {
	var out []Cell
	for _, sp := range specs {
		for _, s := range suites {
			out = append(out, Cell{Suite: s, Build: sp})
		}
	}
	return out
}

// Run runs every suite on every build, one build after another, and
// returns one result per suite x build.
func (r *Runner) Run(ctx context.Context, suites []*suite.Suite, specs []spec.Spec) []report.Result {
	return r.RunCells(ctx, Cells(suites, specs), 1)
}

// RunCells runs cells, up to jobs builds at a time (the suites of one
// build run one after another). A build that cannot be made gives ERROR
// results with the reason. Results come back in the cells' order, then
// each build's crash row (report.CrashRow): a HAProxy process that died in
// any suite's run is a finding of its own.
func (r *Runner) RunCells(ctx context.Context, cells []Cell, jobs int) []report.Result {
	results := make([]report.Result, len(cells))
	crashRows := map[string]report.Result{}
	var rowsMu sync.Mutex
	byBuild := map[string][]int{}
	var order []string
	for i, c := range cells {
		if _, ok := byBuild[c.Build.Raw]; !ok {
			order = append(order, c.Build.Raw)
		}
		byBuild[c.Build.Raw] = append(byBuild[c.Build.Raw], i)
	}
	sem := make(chan struct{}, max(jobs, 1))
	var wg sync.WaitGroup
	for _, b := range order {
		wg.Add(1)
		sem <- struct{}{}
		go func(idx []int) {
			defer wg.Done()
			defer func() { <-sem }()
			sp := cells[idx[0]].Build
			img, err := r.Builder.Ensure(ctx, sp)
			for _, i := range idx {
				s := cells[i].Suite
				if err != nil {
					results[i] = report.Result{Suite: s.ID, Upstream: s.Upstream, Title: s.Title, Build: sp.Raw, Name: sp.Raw,
						Verdict: verdict.Error, Reason: Stopped(ctx, err).Error(), Noun: s.Noun}
				} else {
					results[i] = r.RunOne(ctx, s, img)
				}
				fmt.Println(results[i].Line())
				if r := results[i].Reason; strings.Contains(strings.TrimSpace(r), "\n") {
					// The verdict line stays one line; the whole reason (a
					// compile log's tail) goes to the terminal's stderr.
					fmt.Fprintf(os.Stderr, "%s on %s, in full:\n%s\n", s.Name(), results[i].Name, strings.TrimSpace(r))
				}
			}
			var rs []report.Result
			for _, i := range idx {
				rs = append(rs, results[i])
			}
			if row, ok := report.CrashRow(rs); ok {
				fmt.Println(row.Line())
				rowsMu.Lock()
				crashRows[sp.Raw] = row
				rowsMu.Unlock()
			}
		}(byBuild[b])
	}
	wg.Wait()
	for _, b := range order {
		if row, ok := crashRows[b]; ok {
			results = append(results, row)
		}
	}
	return results
}

// RunOne runs one suite on one built image.
func (r *Runner) RunOne(ctx context.Context, s *suite.Suite, img *images.Image) report.Result {
	trials := s.TrialsFor(r.Trials)
	env := &suiteenv.Env{Suite: s, Image: img, Docker: r.Docker, Builder: r.Builder, RunID: r.RunID, Trials: trials, CPUs: r.CPUs, Logf: progress.Printf,
		Start: func(ctx context.Context, o node.Options) (*node.Node, error) { return node.Start(ctx, r.Docker, o) }}
	if r.Local {
		env.Start = node.StartLocal
	}
	t0 := time.Now()
	params, err := suite.ValuesFor(s.Params, r.Params)
	env.Params = params
	var out verdict.Outcome
	if err != nil {
		out.Err = err
	} else {
		progress.Printf("%s on %s: %s", s.Name(), img.Name, s.TrialsText(r.Trials))
		out = suiteenv.Run(ctx, s, env)
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute) // a hung Docker must not hang the run
		env.Close(cctx)
		cancel()
	}
	if ctx.Err() != nil {
		out.Err = Stopped(ctx, out.Err)
	}
	v, violated, reason := verdict.Decide(out, s.Noun)
	// The verdict stays the suite's, about its property; the reason says
	// that HAProxy crashed (the build's crash row judges that).
	reason = verdict.WithMemoryErrors(verdict.WithCrashes(reason, env.Crashes), env.Crashes)
	var watch *verdict.CrashWatch
	if err == nil { // the suite ran: its nodes were looked at
		w := env.CrashWatch
		watch = &w
	}
	return report.Result{
		Suite: s.ID, Upstream: s.Upstream, Title: s.Title, Build: img.Spec.Raw, Image: img.Tag, Origin: img.Origin, Commit: img.Commit,
		Version: img.Version, Name: img.Name, Verdict: v, TrialsRun: len(out.Trials), TrialsViolated: violated,
		Reason: reason, DurationS: time.Since(t0).Seconds(), Noun: s.Noun, VV: img.VV, Config: env.Config,
		Steps: s.StepsWith(params), Trials: out.Trials, Crashes: env.Crashes, CrashWatch: watch,
		Checks:  verdict.TallyChecks(out.Trials),
		Lasting: verdict.Lasting(out, s.Noun), Weak: verdict.WeakObservation(out, s.Noun),
	}
}

// Stopped is err as an interrupted run reports it: once ctx is cancelled
// (harp cancels it on SIGINT, SIGTERM or SIGHUP, with the signal as its
// cause), what was cut short says "interrupted", not a bare "context
// canceled". An error of a live context is left as it is.
func Stopped(ctx context.Context, err error) error {
	if !errors.Is(ctx.Err(), context.Canceled) || (err != nil && strings.Contains(err.Error(), "interrupted")) {
		return err
	}
	why := "interrupted"
	if c := context.Cause(ctx); c != nil && strings.Contains(c.Error(), "interrupted") {
		why = c.Error()
	}
	if err == nil {
		return errors.New(why)
	}
	return fmt.Errorf("%s: %w", why, err)
}

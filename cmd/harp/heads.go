package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/harp-project/harp/harness/core/progress"
	"github.com/harp-project/harp/harness/core/spec"
	"github.com/harp-project/harp/harness/core/suite"
	"github.com/harp-project/harp/harness/live/gitsrc"
	"github.com/harp-project/harp/harness/ops/bisect"
	"github.com/harp-project/harp/harness/ops/findings"
	"github.com/harp-project/harp/harness/ops/report"
	"github.com/harp-project/harp/harness/ops/runner"
	"github.com/harp-project/harp/images"
)

// fetchHeads brings every clone a git: spec names up to date with its
// remotes before a nightly, and says which commit each spec will test.
// A failed fetch is a note, never fatal: the night tests what the clone
// has, and says so.
func fetchHeads(ctx context.Context, specs []spec.Spec) (notes []string) {
	done := map[string]bool{}
	for _, s := range specs {
		if s.Scheme != spec.Git {
			continue
		}
		if _, _, isRange := s.Range(); isRange {
			continue
		}
		if !done[s.Repo] {
			done[s.Repo] = true
			if remotes, err := gitsrc.Git(ctx, s.Repo, "remote"); err == nil && strings.TrimSpace(remotes) != "" {
				progress.Printf("nightly: fetching %s (%s)", s.Repo, strings.Join(strings.Fields(remotes), ", "))
				fctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
				out, err := gitsrc.Git(fctx, s.Repo, "fetch", "--all", "--prune", "--quiet")
				cancel()
				if err != nil {
					n := fmt.Sprintf("fetching %s failed (%s): its heads were tested as the clone had them", s.Repo, report.OneLine(out))
					fmt.Fprintln(os.Stderr, "harp: warning: "+n)
					notes = append(notes, n)
				}
			}
		}
		if c, err := gitsrc.Resolve(ctx, s.Repo, s.Ref); err == nil {
			progress.Printf("nightly: %s is commit %s (%s): %s", s.Raw, c.Short(), c.Describe, c.Subject)
		}
	}
	return notes
}

// regression is a cell to bisect: the same git head passed at Good last
// night and reproduces at Bad tonight.
type regression struct {
	change  int // index in the run's changes
	suite   *suite.Suite
	head    spec.Spec
	good    string
	bad     string
	finding string // the new finding whose check is the oracle ("": the suite's verdict)
}

// regressions picks the changes a bisect can answer: regressed cells of a
// git: head whose commit moved. A suite that names checks is bisected by
// the first check that fails tonight and held last night, so another bug
// already there cannot answer for it.
func regressions(run report.Run, prev []report.Result, suites []*suite.Suite) []regression {
	byID := map[string]*suite.Suite{}
	for _, s := range suites {
		byID[s.ID] = s
	}
	var out []regression
	for i, c := range run.Changes {
		if c.Kind != "regressed" || !strings.HasPrefix(c.Build, "git:") || c.BeforeCommit == "" || c.AfterCommit == "" {
			continue
		}
		s, ok := byID[c.Suite]
		if !ok {
			continue
		}
		head, err := spec.Parse(c.Build)
		if err != nil {
			continue
		}
		g := regression{change: i, suite: s, head: head, good: c.BeforeCommit, bad: c.AfterCommit}
		if g.good == g.bad {
			continue // the verdict moved on the same code: nothing to bisect
		}
		g.finding = newFinding(cell(prev, c), cell(run.Results, c))
		out = append(out, g)
	}
	return out
}

// cell finds a change's result.
func cell(rs []report.Result, c report.Change) report.Result {
	for _, r := range rs {
		if r.Suite == c.Suite && r.Build == c.Build {
			return r
		}
	}
	return report.Result{}
}

// newFinding is the first check-level finding before does not show and
// now does ("" when the suite names no checks).
func newFinding(before, now report.Result) string {
	had := map[string]bool{}
	for _, o := range findings.Of(before) {
		had[o.Signature] = o.Shows
	}
	for _, o := range findings.Of(now) {
		if o.Shows && !had[o.Signature] && strings.Contains(o.Signature, "/") && !strings.HasPrefix(o.Signature, "crash/") {
			return o.Signature
		}
	}
	return ""
}

// bisectRegressions bisects each regression between last night's commit
// and tonight's, within budget in all, and writes the answer into its
// change: the first bad commit and its subject, or the range left.
func bisectRegressions(ctx context.Context, r *runner.Runner, builder *images.Builder, run *report.Run, prev []report.Result,
	suites []*suite.Suite, params map[string]string, reports string, budget time.Duration) {
	gs := regressions(*run, prev, suites)
	if len(gs) == 0 || budget <= 0 {
		return
	}
	end := time.Now().Add(budget)
	for _, g := range gs {
		c := &run.Changes[g.change]
		if time.Now().After(end) {
			c.FirstBad = fmt.Sprintf("not bisected: the bisect budget (%s) was spent", budget)
			continue
		}
		cands, err := bisect.GitRange(ctx, g.head.Repo, g.good, g.bad)
		if err != nil {
			c.FirstBad = "not bisected: " + err.Error()
			continue
		}
		a := bisectArgs{suite: g.suite, params: params, repo: g.head.Repo, old: g.good, new: g.bad, retries: 1,
			srcOpts: spec.Spec{Patches: g.head.Patches, Make: g.head.Make, Flavor: g.head.Flavor},
			reports: filepath.Join(reports, run.ID, "bisects"), finding: g.finding}
		oracle := "its verdict"
		if g.finding != "" {
			oracle = "finding " + findings.ID(g.finding) + " " + g.finding
		}
		progress.Printf("nightly: bisecting #%s on %s over %d commits (%s..%s), %s as the oracle, until %s",
			g.suite.ID, c.Build, len(cands), short(g.good), short(g.bad), oracle, end.Format("15:04:05"))
		brun := report.Run{ID: report.NewID(), Started: time.Now(), Command: "nightly bisect of " + c.String(), Harp: harpVersion()}
		o := bisect.Options{Retries: 1, Deadline: end, Logf: progress.Printf}
		out := bisect.Run(ctx, cands, bisectOracle(a, r, builder, &brun), o)
		out.Finding = g.finding
		dir, werr := writeBisectFiles(a, brun, out)
		c.FirstBad = answer(out)
		if werr == nil {
			rel, _ := filepath.Rel(filepath.Join(reports, run.ID), dir)
			c.FirstBad += " (" + filepath.Join(rel, "bisect.md") + ")"
		}
	}
}

// answer is a bisect's outcome in a change line.
func answer(o bisect.Outcome) string {
	switch {
	case o.First != nil:
		return fmt.Sprintf("first bad commit %s %s", o.First.Label, o.First.Subject)
	case len(o.Suspects) > 0:
		var ids []string
		for _, s := range o.Suspects {
			ids = append(ids, s.Label)
		}
		return fmt.Sprintf("the first bad commit is one of %d: %s", len(ids), strings.Join(ids, " "))
	case o.Unmet != "":
		return "bisect could not answer: " + o.Unmet
	}
	return "bisect could not answer"
}

func short(id string) string { return id[:min(12, len(id))] }

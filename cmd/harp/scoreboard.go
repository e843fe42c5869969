package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/harp-project/harp/harness/core/progress"
	"github.com/harp-project/harp/harness/ops/findings"
	"github.com/harp-project/harp/harness/ops/history"
	"github.com/harp-project/harp/harness/ops/report"
)

// cmdScoreboard reruns every check of the scoreboard with this harp, on
// its fix's bad and fixed releases, then on the fix's parent and the fix
// where the releases did not catch it, trials times each, and writes
// docs/upstream-bugs.md from those runs alone. Each unit (one suite on
// the builds its catches need, one trial) is a matrix run in a directory
// of its own: a unit whose run is there is not run again (resume), and
// --shard runs every n-th unit (merge by copying the directories).
func cmdScoreboard(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("scoreboard", flag.ContinueOnError)
	bf := newBoardFlags(fs, "a clone of haproxy/haproxy (required): its release tags and fix commits are built")
	reports := fs.String("reports", "reports/scoreboard", "where the units' runs go (and are found again)")
	trials := fs.Int("trials", 3, "runs of each cell, 1 to 9")
	shard := fs.String("shard", "1/1", "run shard i of n of the units (i/n); the doc is written by an unsharded run over every shard's directories")
	phase := fs.String("phase", "all", "releases, commits (needs every releases unit's run), doc (write the doc from the runs there), or all")
	only := fs.String("fixes", "", "only these fixes (ids or prefixes, separated by commas): the doc then says so")
	jobs := fs.Int("jobs", 1, "builds a unit's matrix runs at the same time")
	plan := fs.Bool("plan", false, "list the units (and whether each ran) and stop")
	if !flags(fs, args) {
		return 3
	}
	if *trials < 1 || *trials > 9 {
		return fail("scoreboard: --trials %d: want 1 to 9", *trials)
	}
	si, sn, err := report.ParseShard(*shard)
	if err != nil {
		return fail("scoreboard: %v", err)
	}
	switch *phase {
	case "all", history.PhaseReleases, history.PhaseCommits, "doc":
	default:
		return fail("scoreboard: --phase %q: want releases, commits, doc or all", *phase)
	}
	// The doc's worth is that its runs are of one harp's code: a harp that
	// cannot name its commit would write runs nobody can trace.
	if v := harpVersion(); !*plan && *phase != "doc" && !knownCommit(v) {
		return fail("scoreboard: this harp records no commit of its own (%s): build it with make (-ldflags -X main.commit=...), or with VCS stamping on", v)
	}
	if sn > 1 && (*phase == "all" || *phase == "doc") {
		return fail("scoreboard: --shard %s with --phase %s: a shard runs one phase (releases, then commits once every releases shard is in --reports); the doc is written unsharded", *shard, *phase)
	}
	fixes, js, err := bf.load(ctx, "scoreboard")
	if err != nil {
		return fail("scoreboard: %v", err)
	}
	abs := *bf.repo
	planned := fixes
	if *only != "" {
		if planned, err = pick(fixes, *only); err != nil {
			return fail("scoreboard: %v", err)
		}
	}
	var failed []string
	// What a plan costs: units and distinct builds still to run (builds
	// dominate a cold scoreboard: minutes each).
	toRun, builds := 0, map[string]bool{}
	runPhase := func(units []history.Unit) {
		units = report.Shard(units, si, sn)
		for k, u := range units {
			dir := filepath.Join(*reports, u.Name())
			done := ran(dir)
			if *plan {
				fmt.Printf("%-9s %-40s trial %d  %d builds  fixes %s  %s\n", u.Phase, u.Suite, u.Trial, len(u.Builds), strings.Join(u.Fixes, ","), map[bool]string{true: "ran", false: "to run"}[done])
				if !done {
					toRun++
					for _, b := range u.Builds {
						builds[b] = true
					}
				}
				continue
			}
			if done {
				progress.Printf("scoreboard: unit %d of %d: %s already ran (resumed)", k+1, len(units), u.Name())
				continue
			}
			progress.Printf("scoreboard: unit %d of %d: %s on %d builds", k+1, len(units), u.Name(), len(u.Builds))
			if err := runUnit(ctx, u, dir, *jobs); err != nil {
				failed = append(failed, fmt.Sprintf("%s: %v", u.Name(), err))
			}
		}
	}
	if *phase == "all" || *phase == history.PhaseReleases {
		runPhase(history.PlanReleases(planned, js, abs, *trials))
	}
	if *phase == "all" || *phase == history.PhaseCommits {
		rel := filepath.Join(*reports, history.PhaseReleases)
		if _, err := os.Stat(rel); *plan && os.IsNotExist(err) {
			// The commits phase runs the fixes the releases did not catch:
			// it cannot be planned before them.
			fmt.Printf("commits   (planned once the releases phase has run: none in %s yet)\n", rel)
		} else {
			runs, err := scanRuns([]string{rel})
			if err != nil {
				return fail("scoreboard: %v", err)
			}
			runPhase(history.PlanCommits(history.Make(planned, js, runs), abs, *trials))
		}
	}
	if *plan {
		fmt.Printf("to run: %d units on %d distinct builds\n", toRun, len(builds))
		return 0
	}
	if len(failed) > 0 {
		// A unit without its run leaves cells unknown: no doc from them.
		return fail("scoreboard: %d units left no run: %s", len(failed), strings.Join(failed, "; "))
	}
	if *phase != "all" && *phase != "doc" {
		return 0
	}
	runs, err := scanRuns([]string{*reports})
	if err != nil {
		return fail("scoreboard: %v", err)
	}
	b := history.Make(fixes, js, runs)
	if *only != "" {
		picked := map[string]bool{}
		for _, f := range planned {
			picked[f.Commit] = true
		}
		b.Only(func(f history.Fix) bool { return picked[f.Commit] })
	}
	cmd := fmt.Sprintf("harp scoreboard --repo CLONE --trials %d", *trials)
	if *only != "" {
		cmd += " --fixes " + *only + " (the other fixes' checks were not run: their cells are empty)"
	}
	if err := bf.write(ctx, &b, cmd, false); err != nil {
		return fail("scoreboard: %v", err)
	}
	fmt.Fprintf(os.Stderr, "scoreboard: %d fixes, %d observable, %d caught, %d missed, %d flaky, %d inconclusive, %d not run, %d without a check\n",
		len(b.Rows), b.Observable, b.Counts[history.Caught], b.Counts[history.Missed], b.Counts[history.Flaky], b.Counts[history.Inconclusive], b.Counts[history.NotRun], b.Counts[history.NoCheck])
	return 0
}

// pick keeps the fixes whose ids start with one of the prefixes given; a
// prefix that matches none is an error (a typo must not shrink the run).
func pick(fixes []history.Fix, list string) ([]history.Fix, error) {
	var out []history.Fix
	for _, p := range strings.Split(list, ",") {
		p = strings.ToLower(strings.TrimSpace(p))
		if len(p) < 7 {
			return nil, fmt.Errorf("--fixes: %q: want a commit id of 7 characters or more", p)
		}
		found := false
		for _, f := range fixes {
			if strings.HasPrefix(f.Commit, p) {
				out, found = append(out, f), true
			}
		}
		if !found {
			return nil, fmt.Errorf("--fixes: %s is none of the history's fixes", p)
		}
	}
	return out, nil
}

// ran says whether a unit's directory holds a finished run (its
// summary.json).
func ran(dir string) bool {
	got, err := findings.Scan(dir)
	return err == nil && len(got) > 0
}

// runUnit runs one unit: this harp's matrix of the suite on the unit's
// builds, its run written under dir. A matrix that found the bug exits
// non-zero too: what counts is a run left in dir.
func runUnit(ctx context.Context, u history.Unit, dir string, jobs int) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, self, "matrix", "--haproxy", strings.Join(u.Builds, " "), "--suites", "suite:"+u.Suite,
		"--jobs", fmt.Sprint(jobs), "--reports", dir)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	err = cmd.Run()
	if ran(dir) {
		return nil
	}
	if err == nil {
		err = errors.New("the matrix left no run")
	}
	return err
}

// knownCommit says whether a harp version line names the commit harp was
// built from.
func knownCommit(version string) bool {
	return !strings.Contains(version, "commit unknown") && strings.Contains(version, "commit ")
}

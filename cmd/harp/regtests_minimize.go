package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/harp-project/harp/harness/core/progress"
	"github.com/harp-project/harp/harness/core/spec"
	"github.com/harp-project/harp/harness/ops/regtest"
)

// upstreamArgs starts a run script that runs haproxy as upstream's
// scripts/run-regtests.sh does (zero-warning among them): a candidate that
// only passes without them would fail in upstream's CI.
const upstreamArgs = "#!/bin/sh\nHAPROXY_ARGS=${HAPROXY_ARGS:--dM -dI -dW}\nexport HAPROXY_ARGS\n"

// regTestsMinimize reduces a finding's reg-test by delta debugging: parts
// are removed one at a time while the test still FAILS on the bad build,
// for the reason it failed there, and passes on the good one.
func regTestsMinimize(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("reg-tests minimize", flag.ContinueOnError)
	vtcFile := fs.String("vtc", "", "the finding's reg-test (.vtc)")
	bad := fs.String("bad", "", "the build that shows the finding (one spec)")
	good := fs.String("good", "", "the build that does not (one spec: the fix)")
	out := fs.String("out", "", "where the minimized test goes (default: FILE with .min.vtc)")
	maxRuns := fs.Int("max-runs", 300, "bound on the candidates tried, each run on both builds")
	timeout := fs.Duration("timeout", 2*time.Minute, "bound on one run of one candidate on one build")
	repeat := fs.Int("repeat", 3, "runs of each candidate on the good build (with each runner): all must pass")
	if !flags(fs, args) {
		return 3
	}
	if !strings.HasSuffix(*vtcFile, ".vtc") {
		return fail("reg-tests minimize: --vtc names the finding's reg-test, a .vtc file (and --bad, --good its builds)")
	}
	if *bad == "" || *good == "" {
		return fail("reg-tests minimize: --bad and --good name the builds with and without the finding")
	}
	file := *vtcFile
	body, err := os.ReadFile(file)
	if err != nil {
		return fail("reg-tests minimize: %v", err)
	}
	if *out == "" {
		*out = strings.TrimSuffix(file, ".vtc") + ".min.vtc"
	}
	var builds [2]string
	var parsed [2]spec.Spec
	for i, raw := range []string{*bad, *good} {
		specs, err := parseSpecs(raw)
		if err != nil {
			return fail("%v", err)
		}
		if len(specs) != 1 {
			return fail("reg-tests minimize: %q names %d builds, want one", raw, len(specs))
		}
		builds[i], parsed[i] = specs[0].Raw, specs[0]
	}
	_, b, err := setup(ctx)
	if err != nil {
		return fail("%v", err)
	}
	// Each build's runners: Debian's varnishtest, and upstream's VTest
	// too when the user has it; a candidate must give the same answer
	// under each, and on the good build every time of --repeat (a test
	// that lost the expect its next step waited on races).
	var runs [2][]func(vtc string) (regtest.Outcome, error)
	for i, raw := range builds {
		for _, withVTest := range []bool{false, true} {
			work, err := os.MkdirTemp("", "harp-minimize-")
			if err != nil {
				return fail("%v", err)
			}
			defer os.RemoveAll(work)
			if err := os.WriteFile(filepath.Join(work, "run"), []byte(upstreamArgs+runScript[len("#!/bin/sh\n"):]), 0o755); err != nil {
				return fail("%v", err)
			}
			pkgs := []string{"varnish|vinyl-cache"}
			if withVTest {
				if pkgs, err = userRunner(work); err != nil {
					return fail("%v", err)
				}
				if _, err := os.Stat(filepath.Join(work, "vtest")); err != nil {
					continue // the user has no VTest: varnishtest alone
				}
			}
			img, run, err := testRunner(ctx, b, parsed[i], work, pkgs, *timeout)
			if err != nil {
				return fail("%v", err)
			}
			if !withVTest {
				progress.Printf("%s: HAProxy %s", raw, img.Version)
			}
			name := filepath.Base(file)
			runs[i] = append(runs[i], func(vtc string) (regtest.Outcome, error) {
				if err := os.WriteFile(filepath.Join(work, name), []byte(vtc), 0o644); err != nil {
					return regtest.Outcome{}, err
				}
				out, _, err := run(work)
				if err != nil {
					return regtest.Outcome{}, err
				}
				o, ok := regtest.Results(out)[name]
				if !ok {
					return regtest.Outcome{Result: regtest.Error, Why: "the runner printed no result"}, nil
				}
				return o, nil
			})
		}
	}
	// all runs a candidate on one build with every runner, times times:
	// their one outcome, or ERROR when they disagree.
	all := func(i, times int, vtc string) (regtest.Outcome, error) {
		var first regtest.Outcome
		for t := range times {
			for j, run := range runs[i] {
				o, err := run(vtc)
				if err != nil {
					return o, fmt.Errorf("running a candidate on %s: %v", builds[i], err)
				}
				if t == 0 && j == 0 {
					first = o
				} else if o.Result != first.Result || !regtest.SameWhy(o.Why, first.Why) {
					// Runners or runs that disagree: no answer to keep.
					return regtest.Outcome{Result: regtest.Error, Why: fmt.Sprintf("runs disagree: %s (%s), then %s (%s)", first.Result, first.Why, o.Result, o.Why)}, nil
				}
			}
		}
		return first, nil
	}
	n := 0
	oracle := func(vtc string) (regtest.Outcome, regtest.Outcome, error) {
		n++
		bo, err := all(0, 1, vtc)
		if err != nil {
			return bo, bo, err
		}
		if bo.Result != regtest.Failed { // no need to run the good build
			progress.Printf("candidate %d (%d lines): %s on the bad build", n, strings.Count(vtc, "\n"), bo.Result)
			return bo, regtest.Outcome{}, nil
		}
		gr, err := all(1, *repeat, vtc)
		if err != nil {
			return bo, gr, err
		}
		progress.Printf("candidate %d (%d lines): %s on the bad build, %s on the good one", n, strings.Count(vtc, "\n"), bo.Result, gr.Result)
		return bo, gr, nil
	}
	m, err := regtest.Minimize(string(body), oracle, *maxRuns)
	if err != nil {
		return fail("reg-tests minimize %s: %v", file, err)
	}
	head := fmt.Sprintf("# Minimized by harp reg-tests minimize from %s: %d lines to %d, %d candidates,\n# each FAILED on %s (%s) and passed on %s.\n",
		filepath.Base(file), m.LinesFrom, m.LinesTo, m.Runs, builds[0], m.BadWhy, builds[1])
	vtc := m.VTC
	if first, rest, ok := strings.Cut(vtc, "\n"); ok && strings.HasPrefix(first, "varnishtest ") {
		vtc = first + "\n" + head + rest
	}
	if err := os.WriteFile(*out, []byte(vtc), 0o644); err != nil {
		return fail("%v", err)
	}
	fmt.Printf("%s: %d lines to %d (%d parts removed, %d candidates run on both builds): %s\n", file, m.LinesFrom, m.LinesTo, m.Removed, m.Runs, *out)
	return 0
}

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/harp-project/harp/fixtures"
	"github.com/harp-project/harp/harness/core/fixcase"
	"github.com/harp-project/harp/harness/core/progress"
	"github.com/harp-project/harp/harness/core/spec"
	"github.com/harp-project/harp/harness/core/suite"
	"github.com/harp-project/harp/harness/live/child"
	"github.com/harp-project/harp/harness/ops/regtest"
	"github.com/harp-project/harp/harness/ops/report"
	"github.com/harp-project/harp/harness/ops/runner"
	"github.com/harp-project/harp/images"
)

// regtestsDir is where the exported reg-tests live, in upstream's layout.
const regtestsDir = "reg-tests"

// manifestName is the manifest's file in that folder.
const manifestName = "harp-manifest.json"

func cmdRegTests(ctx context.Context, args []string) int {
	if len(args) == 0 {
		return fail("reg-tests: say export or run (see harp help)")
	}
	switch args[0] {
	case "export":
		return regTestsExport(args[1:])
	case "run":
		return regTestsRun(ctx, args[1:])
	case "minimize":
		return regTestsMinimize(ctx, args[1:])
	}
	return fail("reg-tests: no subcommand %q (export, run, minimize)", args[0])
}

// regTestsExport writes every exportable upstream-fix case as a .vtc and
// the manifest (validations of a test whose text did not change are kept).
func regTestsExport(args []string) int {
	fs := flag.NewFlagSet("reg-tests export", flag.ContinueOnError)
	dir := fs.String("dir", regtestsDir, "the reg-tests folder")
	scoreboard := fs.String("scoreboard", "docs/upstream-bugs.md", "the scoreboard, for each fix's bad and fixed releases")
	if !flags(fs, args) {
		return 3
	}
	tests, refused, err := exportAll()
	if err != nil {
		return fail("%v", err)
	}
	pairs, err := releasePairs(*scoreboard)
	if err != nil {
		return fail("%v", err)
	}
	mpath := filepath.Join(*dir, manifestName)
	old, err := regtest.Load(mpath)
	if err != nil {
		return fail("%v", err)
	}
	m := regtest.Manifest{Refused: refused}
	for _, t := range tests {
		file := filepath.Join(*dir, filepath.FromSlash(t.File))
		prev, _ := os.ReadFile(file)
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			return fail("%v", err)
		}
		if err := os.WriteFile(file, []byte(t.Text), 0o644); err != nil {
			return fail("%v", err)
		}
		e := regtest.Entry{Test: t}
		e.Bad, e.Fixed = pairs[t.Fix][0], pairs[t.Fix][1]
		if o := old.Entry(t.File); o != nil && regtest.SameRun(string(prev), t.Text) {
			e.Validations = o.Validations // the same test: its validations hold
		}
		m.Tests = append(m.Tests, e)
	}
	// A file of an older export that no case writes now goes.
	for _, o := range old.Tests {
		if m.Entry(o.File) == nil {
			os.Remove(filepath.Join(*dir, filepath.FromSlash(o.File)))
		}
	}
	if err := m.Save(mpath); err != nil {
		return fail("%v", err)
	}
	kinds := map[string][2]int{}
	for _, t := range tests {
		k := t.Kind
		kinds[k] = [2]int{kinds[k][0] + 1, kinds[k][1]}
	}
	for _, r := range refused {
		kinds[r.Kind] = [2]int{kinds[r.Kind][0], kinds[r.Kind][1] + 1}
	}
	fmt.Printf("exported %d reg-tests to %s, %d cases not exported (%s)\n", len(tests), *dir, len(refused), mpath)
	for _, k := range slices.Sorted(maps.Keys(kinds)) {
		fmt.Printf("  %-13s exported %2d, not %2d\n", k, kinds[k][0], kinds[k][1])
	}
	return 0
}

// exportAll exports every case of every upstream-fixes suite.
func exportAll() ([]regtest.Test, []regtest.Refused, error) {
	dirs, err := fs.ReadDir(fixtures.UpstreamFixes, "upstream-fixes")
	if err != nil {
		return nil, nil, err
	}
	var areas []string
	for _, d := range dirs {
		if d.IsDir() {
			areas = append(areas, d.Name())
		}
	}
	var tests []regtest.Test
	var refused []regtest.Refused
	for _, area := range areas {
		suite := "upstream-fixes-" + area
		cases, err := fixcase.Load(fixtures.UpstreamFixes, path.Join("upstream-fixes", area))
		if err != nil {
			return nil, nil, err
		}
		for _, c := range cases {
			t, err := regtest.Export(suite, c)
			switch why := regtest.Reason(err); {
			case why != "":
				refused = append(refused, regtest.Refused{Check: t.Check, Kind: string(c.Kind), Reason: why})
			case err != nil:
				return nil, nil, fmt.Errorf("%s: %w", t.Check, err)
			default:
				tests = append(tests, t)
			}
		}
	}
	// The suites that write their own (conformance properties), and
	// those that say why they cannot.
	for _, s := range suite.All() {
		switch {
		case s.RegTests != nil:
			ts, not, err := s.RegTests()
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %w", s.ID, err)
			}
			for _, t := range ts {
				tests = append(tests, regtest.Test{Check: t.Check, Kind: t.Kind, File: t.File, Text: t.Text})
			}
			for _, n := range not {
				refused = append(refused, regtest.Refused{Check: n.Check, Kind: n.Kind, Reason: n.Reason})
			}
		case s.NoRegTest != "":
			refused = append(refused, regtest.Refused{Check: s.ID, Kind: "conformance", Reason: s.NoRegTest})
		}
	}
	// The runner sees every file in one folder: names must not collide.
	seen := map[string]string{}
	for _, t := range tests {
		if o, ok := seen[path.Base(t.File)]; ok {
			return nil, nil, fmt.Errorf("%s and %s export to the same file name %s", o, t.Check, path.Base(t.File))
		}
		seen[path.Base(t.File)] = t.Check
	}
	return tests, refused, nil
}

// releasePairs reads the scoreboard's table: each fix's bad and fixed
// releases (`v2.6.0 → v2.7.0`), by the fix's 12-digit commit.
func releasePairs(file string) (map[string][2]string, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("the scoreboard: %w", err)
	}
	row := regexp.MustCompile("(?m)^\\| `([0-9a-f]{12})` \\|.*?\\| (v[0-9][^ |]*) → (v[0-9][^ |]*) \\|")
	pairs := map[string][2]string{}
	for _, m := range row.FindAllStringSubmatch(string(data), -1) {
		pairs[m[1]] = [2]string{m[2], m[3]}
	}
	return pairs, nil
}

// runScript runs every .vtc of the folder it lies in with the runner the
// image has: vtest when harp copied one in, else Debian's varnishtest;
// four at a time, each bounded at 10 s as upstream's are. It prints the
// runner's name and version first. An AddressSanitizer build runs as in
// harp's nodes (images.ASanOptions): its first error aborts the process,
// a death the master logs and the runner's log shows.
var runScript = fmt.Sprintf(`#!/bin/sh
cd "$(dirname "$0")"
HAPROXY_PROGRAM=${HAPROXY_PROGRAM:-$(command -v haproxy || echo /usr/sbin/haproxy)}
export HAPROXY_PROGRAM
ASAN_OPTIONS=${ASAN_OPTIONS:-%s}
export ASAN_OPTIONS
if [ -x ./vtest ]; then
	echo "runner: vtest (VTest2, from the user's machine)"
	exec ./vtest -k -j 4 -t 10 *.vtc
fi
for p in varnish vinyl-cache; do
	v=$(dpkg-query -W -f '${Version}' "$p" 2>/dev/null) && [ -n "$v" ] && echo "runner: varnishtest ($p $v)" && break
done
exec varnishtest -k -j 4 -t 10 *.vtc
`, images.ASanOptions)

// regTestsRun runs the reg-tests against builds, in each build's image
// with the runner added, and compares every result with the manifest's
// expectation for that build (and with harp's verdicts, with --compare).
func regTestsRun(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("reg-tests run", flag.ContinueOnError)
	builds := fs.String("haproxy", "deb:latest", "build specs")
	dir := fs.String("dir", regtestsDir, "the reg-tests folder")
	compare := fs.String("compare", "", "harp runs' directories (separated by spaces) on the same builds: each result beside harp's verdict of the same check")
	record := fs.Bool("record", false, "with --compare: keep each result as the test's validation on its build, in the manifest")
	timeout := fs.Duration("timeout", 10*time.Minute, "bound on one build's whole run")
	if !flags(fs, args) {
		return 3
	}
	if *record && *compare == "" {
		return fail("reg-tests run: --record needs --compare (a validation is a result beside harp's verdict)")
	}
	mpath := filepath.Join(*dir, manifestName)
	m, err := regtest.Load(mpath)
	if err != nil {
		return fail("%v", err)
	}
	if len(m.Tests) == 0 {
		return fail("reg-tests run: %s lists no test (run `harp reg-tests export` first)", mpath)
	}
	specs, err := parseSpecs(*builds)
	if err != nil {
		return fail("%v", err)
	}
	var harp *report.Run
	for _, dir := range strings.Fields(*compare) { // several runs: their results together
		s, err := report.LoadSummary(dir)
		if err != nil {
			return fail("--compare: %v", err)
		}
		if harp == nil {
			harp = &report.Run{}
		}
		harp.Results = append(harp.Results, s.Results...)
	}
	_, b, err := setup(ctx)
	if err != nil {
		return fail("%v", err)
	}
	work, err := os.MkdirTemp("", "harp-regtests-")
	if err != nil {
		return fail("%v", err)
	}
	defer os.RemoveAll(work)
	texts := map[string]string{}
	for _, e := range m.Tests {
		body, err := os.ReadFile(filepath.Join(*dir, filepath.FromSlash(e.File)))
		if err != nil {
			return fail("%v", err)
		}
		texts[e.File] = string(body)
		if err := os.WriteFile(filepath.Join(work, path.Base(e.File)), body, 0o644); err != nil {
			return fail("%v", err)
		}
	}
	if err := os.WriteFile(filepath.Join(work, "run"), []byte(runScript), 0o755); err != nil {
		return fail("%v", err)
	}
	pkgs, err := userRunner(work)
	if err != nil {
		return fail("%v", err)
	}
	code := 0
	date := time.Now().UTC().Format("2006-01-02")
	for _, s := range specs {
		img, run, err := testRunner(ctx, b, s, work, pkgs, *timeout)
		if err != nil {
			return fail("%v", err)
		}
		done := progress.Start("running %d reg-tests on %s (HAProxy %s)", len(m.Tests), s.Raw, img.Version)
		out, exit, err := run(work)
		done(err)
		if err != nil {
			return fail("running the reg-tests on %s: %v", s.Raw, runner.Stopped(ctx, err))
		}
		runnerName := strings.TrimPrefix(firstLine(out), "runner: ")
		got := regtest.Results(out)
		// A test that could not do its work (killed at 10 s, a haproxy
		// that never started) runs once more, alone: a second ERROR stays.
		if again := errored(got); len(again) > 0 {
			out2, err := rerun(work, again, run)
			if err != nil {
				return fail("running the reg-tests on %s again: %v", s.Raw, runner.Stopped(ctx, err))
			}
			for name, o := range regtest.Results(out2) {
				o.Why = strings.TrimSpace(o.Why + "; first try: " + got[name].Why)
				got[name] = o
			}
			out += "\n== again: " + strings.Join(again, " ") + "\n" + out2
		}
		bad := 0
		fmt.Printf("== %s (HAProxy %s), runner %s, exit %d\n", s.Raw, img.Version, runnerName, exit)
		for i := range m.Tests {
			e := &m.Tests[i]
			o, ok := got[path.Base(e.File)]
			r := o.Result
			line := fmt.Sprintf("  %-8s %s", r, e.File)
			switch {
			case !ok:
				line = fmt.Sprintf("  %-8s %s: the runner printed no result for it", "NONE", e.File)
				bad++
			case r == regtest.Error:
				line += ": not HAProxy's answer: " + o.Why
				bad++
			case r == regtest.Failed:
				line += ": " + o.Why
			}
			if want := e.Expect(s.Raw, img.Version); ok && r != regtest.Error && want != "" {
				if r == want {
					line += " (as expected)"
				} else {
					line += fmt.Sprintf(" (expected %s)", want)
					bad++
				}
			} else if ok && r != regtest.Error {
				line += " (no validation on this build)"
			}
			if harp != nil {
				hv := harpVerdict(*harp, s.Raw, e.Check)
				if hv == "not run" {
					fmt.Println(line + "; harp: not run in the runs given")
					continue
				}
				agrees := regtest.AgreesOn(r, hv, img.Version, texts[e.File])
				line += fmt.Sprintf("; harp: %s", hv)
				if !agrees {
					line += " DISAGREES" // a harness defect until explained: never green
					bad++
				}
				if *record && ok && r != regtest.Error {
					e.Record(regtest.Validation{Build: s.Raw, Version: img.Version, Runner: runnerName, Result: r, Harp: hv, Agrees: agrees, Date: date})
				}
			}
			fmt.Println(line)
		}
		if bad > 0 {
			fmt.Printf("  %d of %d tests not as the manifest expects on %s (output of the runner: rerun with HARP_KEEP=1)\n", bad, len(m.Tests), s.Raw)
			if os.Getenv("HARP_KEEP") != "" {
				fmt.Println(out)
			}
			code = 1
		}
	}
	if *record {
		if err := m.Save(mpath); err != nil {
			return fail("%v", err)
		}
		fmt.Printf("validations recorded in %s\n", mpath)
	}
	return code
}

// userRunner copies the user's VTest into work, where they have one
// (HARP_VTEST, or vtest on PATH), and says what a build's image needs
// added to run the tests: what VTest2 links, else Debian's varnishtest.
func userRunner(work string) ([]string, error) {
	vt := os.Getenv("HARP_VTEST")
	if vt == "" {
		vt, _ = exec.LookPath("vtest") // upstream's runner, where the user has it
	}
	if vt == "" {
		return []string{"varnish|vinyl-cache"}, nil // sid renamed it; both ship varnishtest
	}
	body, err := os.ReadFile(vt)
	if err != nil {
		return nil, fmt.Errorf("the VTest runner (HARP_VTEST or vtest on PATH): %v", err)
	}
	if err := os.WriteFile(filepath.Join(work, "vtest"), body, 0o755); err != nil {
		return nil, err
	}
	return []string{"libpcre2-8-0", "zlib1g"}, nil // what VTest2 links
}

// testRunner builds s and says how to run a folder of tests (the run
// script, the runner if the user gave one, the .vtc files) against it: in
// the build's image with pkgs added (the runner), or here for a build
// compiled here (its binary, this machine's runner).
func testRunner(ctx context.Context, b *images.Builder, s spec.Spec, work string, pkgs []string, timeout time.Duration) (*images.Image, func(dir string) (string, int, error), error) {
	img, err := b.Ensure(ctx, s)
	if err != nil {
		return nil, nil, runner.Stopped(ctx, err)
	}
	run := func(dir string) (string, int, error) { return runHere(ctx, dir, img.HostBinary, timeout) }
	if img.HostBinary == "" {
		with, err := b.WithPackages(ctx, img.Tag, pkgs...)
		if err != nil {
			return nil, nil, fmt.Errorf("the runner in %s's image: %v", s.Raw, runner.Stopped(ctx, err))
		}
		run = func(dir string) (string, int, error) {
			return b.RunIn(ctx, with, dir, "/harp-regtests", []string{"/harp-regtests/run"}, timeout)
		}
	} else if err := hostRunner(work); err != nil {
		return nil, nil, fmt.Errorf("%s: %v", s.Raw, err)
	}
	return img, run, nil
}

// errored are the tests whose outcome is the runner's ERROR.
func errored(got map[string]regtest.Outcome) []string {
	var names []string
	for name, o := range got {
		if o.Result == regtest.Error {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// rerun runs the named tests of work again, by themselves.
func rerun(work string, names []string, run func(string) (string, int, error)) (string, error) {
	dir, err := os.MkdirTemp("", "harp-regtests-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	for _, n := range append([]string{"run", "vtest"}, names...) {
		body, err := os.ReadFile(filepath.Join(work, n))
		if os.IsNotExist(err) && n == "vtest" {
			continue
		}
		if err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(dir, n), body, 0o755); err != nil {
			return "", err
		}
	}
	out, _, err := run(dir)
	return out, err
}

// hostRunner says whether this machine can run the tests of a compiled
// build (its binary was built here, and its image has no apt to add a
// runner to): the user's VTest (copied into work), or Debian's varnishtest.
func hostRunner(work string) error {
	if _, err := os.Stat(filepath.Join(work, "vtest")); err == nil {
		return nil
	}
	if _, err := exec.LookPath("varnishtest"); err != nil {
		return fmt.Errorf("a compiled build's reg-tests run on this machine, against its binary, and there is no runner here: install Debian's varnish (apt-get install varnish; make reg-tests does), or give upstream's VTest as HARP_VTEST=/path/to/vtest")
	}
	return nil
}

// runHere runs work's run script on this machine against binary.
func runHere(ctx context.Context, work, binary string, timeout time.Duration) (string, int, error) {
	// In a process group of its own, killed whole: the runner forks a
	// process per test, and each starts haproxy; none outlives harp.
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd, stop := child.Command(rctx, timeout, filepath.Join(work, "run"))
	defer stop()
	cmd.Env = append(cmd.Env, "HAPROXY_PROGRAM="+binary)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if errors.As(err, &exit) && rctx.Err() == nil {
		return string(out), exit.ExitCode(), nil
	}
	if rctx.Err() != nil && ctx.Err() == nil {
		err = fmt.Errorf("still running after %s", timeout)
	}
	return string(out), 0, err
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(strings.TrimLeft(s, "\n"), "\n")
	return strings.TrimSpace(l)
}

// harpVerdict is harp's word on a test's checks on one build in the runs
// given (all of them together: a run of some variants completes another):
// REPRODUCED where any failed, PASS where they only held, N/A where none
// was decided.
func harpVerdict(s report.Run, build, check string) string {
	suite, ids := regtest.CheckIDs(check)
	v := "not run"
	for _, r := range s.Results {
		if r.Suite != suite || r.Build != build {
			continue
		}
		if v == "not run" {
			v = "N/A"
		}
		for _, t := range r.Checks {
			if !slices.Contains(ids, t.ID) {
				continue
			}
			switch {
			case t.Failed > 0:
				return "REPRODUCED"
			case t.Held > 0:
				v = "PASS"
			}
		}
	}
	return v
}

// Package bench measures harp (make bench). Each row of the speed table
// is harp's time on a warm image, the time of the script the issue's
// reporter attached upstream (../shared/anchors or HARP_ANCHORS, unchanged) run in the same
// build's image with Python 3 added, and their ratio, each the best of
// BENCH_RUNS (3) runs; the script's conclusion and harp's verdict must
// agree on every run, or the row fails. Then how the cost grows: #3517
// with 1, 10 and 100 sections, a cluster suite with 3, 5 and 9 nodes, the
// matrix with 1, 2 and 4 builds. The table is printed and written to reports/bench-<id>.md.
//
// Then what one scrape of harp doctor --watch costs on 3 instances with
// 100,000 entries each, as ratios to one show table dump (monitor_test.go).
//
// REPO=<haproxy clone> adds the bisect row (#3517 over v2.9.0..v3.0.0) and the conformance tag matrix (one cell after another against side by side);
// BENCH_JOBS=N runs the tag matrix's second pass N cells at a time (3 by default).
// BENCH_ONLY=speed|growth|monitor|bisect|matrix runs one part (speed includes
// bisect and matrix when REPO is set).
package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/client"

	"github.com/harp-project/harp/harness/core/spec"
	"github.com/harp-project/harp/harness/core/suite"
	"github.com/harp-project/harp/harness/live/cache"
	"github.com/harp-project/harp/harness/live/engine"
	"github.com/harp-project/harp/harness/ops/report"
	"github.com/harp-project/harp/harness/ops/runner"
	"github.com/harp-project/harp/images"
	"github.com/harp-project/harp/suites/cluster/convergence"
	"github.com/harp-project/harp/suites/issue3517"
	"github.com/harp-project/harp/suites/issue3519"
)

const (
	buggy   = "deb:experimental" // 3.4.7: both issues reproduce
	fixed17 = "src:deb:3.0.11,patch=../fixtures/patches/3517-peers-dont-stop-per-section.diff"
	fixed19 = "src:deb:3.0.11,patch=../fixtures/patches/3519-peers-alive-flag-owner-only.diff"
)

type bench struct {
	b       *testing.B
	ctx     context.Context
	docker  *client.Client
	builder *images.Builder
	runID   string
	out     []string // the Markdown written at the end
}

func setup(b *testing.B) *bench {
	ctx := context.Background()
	docker, err := engine.Connect(ctx)
	if err != nil {
		b.Fatal(err)
	}
	os.MkdirAll(cache.Dir(), 0o755)
	return &bench{b: b, ctx: ctx, docker: docker, builder: &images.Builder{Docker: docker, Cache: cache.Dir()},
		runID: "bench-" + report.NewID()}
}

func progress(format string, args ...any) {
	fmt.Printf("[bench %s] %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

func (x *bench) image(raw string) *images.Image {
	s, err := spec.Parse(raw)
	if err != nil {
		x.b.Fatal(err)
	}
	img, err := x.builder.Ensure(x.ctx, s)
	if err != nil {
		x.b.Fatal(err)
	}
	return img
}

// harp runs one suite on a build as `harp run` does and times it.
func (x *bench) harp(s *suite.Suite, img *images.Image, params ...string) (report.Result, time.Duration) {
	given, err := suite.ParseParams(params)
	if err != nil {
		x.b.Fatal(err)
	}
	r := &runner.Runner{Docker: x.docker, Builder: x.builder, RunID: x.runID, Params: given}
	t0 := time.Now()
	res := r.RunOne(x.ctx, s, img)
	took := time.Since(t0)
	progress("harp: %s (%.1f s)", res.Line(), took.Seconds())
	return res, took
}

func (x *bench) say(format string, args ...any) {
	x.out = append(x.out, fmt.Sprintf(format, args...))
}

// runs is how many times each side of a speed row runs (BENCH_RUNS, 3):
// the row gives the best time of each.
func runs() int {
	if n, err := strconv.Atoi(os.Getenv("BENCH_RUNS")); err == nil && n > 0 {
		return n
	}
	return 3
}

// compare is one row of the speed table: harp's suite and the issue
// reporter's own script on the same build, in turns, each run's verdicts
// compared (a disagreement fails the row), the best time of each kept.
func (x *bench) compare(metric, work string, s *suite.Suite, raw string) {
	img := x.image(raw)
	py, err := x.builder.WithPython(x.ctx, img, x.image(buggy))
	if err != nil {
		x.b.Fatal(err)
	}
	var h, base time.Duration
	var verdict report.Result
	agree := "yes"
	for i := range runs() {
		res, ht := x.harp(s, img)
		v, why, bt := x.script(s.ID, py)
		if string(res.Verdict) != v {
			agree = "**no**"
			x.b.Errorf("%s, run %d: harp says %s, the reporter's script %s (%s)", work, i+1, res.Line(), v, why)
		}
		if i == 0 || ht < h {
			h, verdict = ht, res
		}
		if i == 0 || bt < base {
			base = bt
		}
	}
	x.say("| %s | %s | %.1f s | %.1f s | %.2fx | %s |", work, verdict.Verdict, h.Seconds(), base.Seconds(), h.Seconds()/base.Seconds(), agree)
	x.b.ReportMetric(h.Seconds()/base.Seconds(), metric+"-ratio")
}

func only(part string) bool {
	o := os.Getenv("BENCH_ONLY")
	return o == "" || o == part
}

func BenchmarkHarp(b *testing.B) {
	x := setup(b)
	defer engine.SweepRun(context.Background(), x.docker, x.runID)
	x.say("# harp benchmark %s\n", x.runID)
	x.say("On warm images, on this machine (%s). Speed rows: best of %d runs of each side, in turns. Baselines: the scripts the reporters attached to the upstream issues (bench/reporters), run in the same build's image with Python 3 added, so both use the same binary; their time is the container's, from its creation to its removal.\n", machine(), runs())
	if only("speed") {
		x.say("| work | verdict | harp | reporter's script | ratio | same verdict |")
		x.say("|---|---|---|---|---|---|")
		x.compare("3517-buggy", "#3517, 3 reloads, buggy build (3.4.7)", issue3517.Suite, buggy)
		x.compare("3517-fixed", "#3517, 3 reloads, fixed build (3.0.11 + fix)", issue3517.Suite, fixed17)
		x.compare("3519-buggy", "#3519, 5 trials, buggy build (3.4.7)", issue3519.Suite, buggy)
		x.compare("3519-fixed", "#3519, 5 trials, fixed build (3.0.11 + fix)", issue3519.Suite, fixed19)
	}
	if !only("speed") && (only("bisect") || only("matrix")) {
		x.say("| work | verdict | harp | baseline | ratio | same verdict |")
		x.say("|---|---|---|---|---|---|")
	}
	if only("speed") || only("bisect") {
		x.bisect()
	}
	if only("speed") || only("matrix") {
		x.tagMatrix()
	}
	if only("speed") || only("bisect") || only("matrix") {
		x.say("")
	}
	if only("growth") {
		x.growth()
	}
	if only("monitor") {
		x.monitor()
	}
	fmt.Println()
	text := strings.Join(x.out, "\n") + "\n"
	fmt.Print(text)
	os.MkdirAll("../reports", 0o755)
	path := filepath.Join("..", "reports", x.runID+".md")
	if err := os.WriteFile(path, []byte(text), 0o644); err == nil {
		fmt.Printf("\nwritten to %s\n", strings.TrimPrefix(path, "../"))
	}
}

// bisect is the bisect row, run when REPO names a HAProxy clone.
func (x *bench) bisect() {
	repo := os.Getenv("REPO")
	if repo == "" {
		x.say("| bisect #3517 over v2.9.0..v3.0.0 | - | not run (REPO=<haproxy clone> runs it) | by hand | - | - |")
		return
	}
	dir := x.b.TempDir()
	ctx, cancel := context.WithTimeout(x.ctx, 40*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "../bin/harp", "bisect", "--suites", "issue:3517", "--good", "v2.9.0", "--bad", "v3.0.0", "--repo", repo, "--reports", dir)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	t0 := time.Now()
	err := cmd.Run()
	took := time.Since(t0)
	first := "?"
	if md, rerr := os.ReadFile(firstFile(dir, "bisect.md")); rerr == nil {
		for _, l := range strings.Split(string(md), "\n") {
			if strings.Contains(l, "first bad") || strings.Contains(l, "First bad") {
				first = strings.TrimSpace(l)
				break
			}
		}
	}
	if err != nil {
		x.b.Errorf("bisect: %v", err)
	}
	x.say("| bisect #3517 over v2.9.0..v3.0.0 (%s) | %s | %s | by hand | - | - |", repo, first, took.Round(time.Second))
}

// tagMatrix is the conformance tag matrix (9 release tags x every
// property, the images built first): one cell after another (--jobs 1, what
// the matrix was) against cells side by side (--jobs 3), with the
// verdicts of both compared cell by cell. Run when REPO names a clone.
func (x *bench) tagMatrix() {
	repo := os.Getenv("REPO")
	if repo == "" {
		x.say("| conformance tag matrix v2.6.0..v3.4.0 | - | not run (REPO=<haproxy clone> runs it) | - | - | - |")
		return
	}
	builds := "git:" + repo + "@v2.6.0..v3.4.0"
	ctx, cancel := context.WithTimeout(x.ctx, 90*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "../bin/harp", "images", "--haproxy", builds).CombinedOutput(); err != nil {
		x.b.Errorf("tag matrix: building the tags: %v\n%s", err, out)
		return
	}
	var size string // the size of the side-by-side run's report (#25: it stays readable)
	run := func(jobs string) (map[string]string, time.Duration) {
		dir := x.b.TempDir()
		cmd := exec.CommandContext(ctx, "../bin/harp", "matrix", "--haproxy", builds, "--suites", "area:conformance", "--jobs", jobs, "--reports", dir)
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		t0 := time.Now()
		cmd.Run() // a finding is exit 1: the verdicts are read below
		took := time.Since(t0)
		size = reportSize(dir)
		got := map[string]string{}
		if data, err := os.ReadFile(firstFile(dir, "summary.json")); err == nil {
			// The run's own type: a field read by another name would
			// compare nothing (a first version keyed cells by suite alone).
			var s report.Run
			if json.Unmarshal(data, &s) == nil {
				for _, r := range s.Results {
					got[r.Suite+" on "+r.Name] = string(r.Verdict)
				}
			}
		}
		return got, took
	}
	side := os.Getenv("BENCH_JOBS") // cells side by side: 3 on 2 CPUs, where most cells wait
	if side == "" {
		side = "3"
	}
	one, tOne := run("1")
	two, tTwo := run(side)
	same := len(one) > 0 && len(one) == len(two)
	var differ []string
	for k, v := range one {
		if two[k] != v {
			same = false
			differ = append(differ, fmt.Sprintf("%s: %s vs %s", k, v, two[k]))
		}
	}
	if !same {
		x.b.Errorf("tag matrix: verdicts differ between --jobs 1 and --jobs %s (%d and %d cells): %s", side, len(one), len(two), strings.Join(differ, "; "))
	}
	x.say("| conformance tag matrix v2.6.0..v3.4.0, %d cells (images built; report %s) | %d cells | %s (--jobs %s) | %s (--jobs 1) | %.2fx | %v |",
		len(one), size, len(two), tTwo.Round(time.Second), side, tOne.Round(time.Second), tTwo.Seconds()/tOne.Seconds(), same)
}

// reportSize is what a matrix run left for a reader: report.md, report.html
// and the whole directory.
func reportSize(dir string) string {
	var md, html, all int64
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		all += info.Size()
		switch d.Name() {
		case "report.md":
			md += info.Size()
		case "report.html":
			html += info.Size()
		}
		return nil
	})
	mb := func(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/1e6) }
	return fmt.Sprintf("report.md %s, report.html %s, %s in all", mb(md), mb(html), mb(all))
}

func firstFile(dir, name string) string {
	var found string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && found == "" && d.Name() == name {
			found = p
		}
		return nil
	})
	return found
}

// growth shows how the cost grows with the size of the work.
func (x *bench) growth() {
	x.say("How the cost grows:\n")
	x.say("| work | size | verdict | harp | per unit |")
	x.say("|---|---|---|---|---|")
	fix := x.image(fixed17)
	for _, n := range []int{1, 10, 100} {
		r, took := x.harp(issue3517.Suite, fix, fmt.Sprintf("SECTIONS=%d", n))
		x.say("| #3517, 3 reloads, fixed build | %d sections | %s | %.1f s | %.2f s per reload |", n, r.Verdict, took.Seconds(), perTrial(r).Seconds())
	}
	img := x.image(buggy)
	for _, n := range []int{3, 5, 9} {
		r, took := x.harp(convergence.Suite, img, fmt.Sprintf("NODES=%d", n))
		x.say("| cluster convergence (3.4.7) | %d nodes | %s | %.1f s | %.2f s per node |", n, r.Verdict, took.Seconds(), took.Seconds()/float64(n))
	}
	all := []string{"deb:experimental", "deb:sid", "deb:trixie", "deb:bookworm"}
	for _, raw := range all {
		x.image(raw)
	}
	for _, n := range []int{1, 2, 4} {
		builds := strings.Join(all[:n], " ")
		dir := x.b.TempDir()
		ctx, cancel := context.WithTimeout(x.ctx, 15*time.Minute)
		cmd := exec.CommandContext(ctx, "../bin/harp", "matrix", "--haproxy", builds, "--suites", "issue:3517", "--reports", dir)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		t0 := time.Now()
		err := cmd.Run()
		took := time.Since(t0)
		cancel()
		// Exit 1 is a matrix with a REPRODUCED cell: a verdict, not a failure.
		if ee, ok := err.(*exec.ExitError); err != nil && (!ok || ee.ExitCode() > 1) {
			x.b.Errorf("matrix of %d builds: %v\n%s", n, err, out.String())
		}
		progress("matrix of %d builds (issue:3517): %.1f s", n, took.Seconds())
		x.say("| matrix, issue:3517, --jobs 1 | %d builds | exit %d | %.1f s | %.1f s per cell |", n, exitCode(err), took.Seconds(), took.Seconds()/float64(n))
	}
}

func exitCode(err error) int {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

func perTrial(r report.Result) time.Duration {
	var sum time.Duration
	for _, t := range r.Trials {
		sum += t.Duration
	}
	if len(r.Trials) == 0 {
		return 0
	}
	return sum / time.Duration(len(r.Trials))
}

func machine() string {
	cpus := "?"
	if b, err := exec.Command("nproc").Output(); err == nil {
		cpus = strings.TrimSpace(string(b))
	}
	return cpus + " CPUs"
}

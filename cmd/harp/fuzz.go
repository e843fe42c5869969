package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/moby/moby/client"

	"github.com/harp-project/harp/harness/core/progress"
	"github.com/harp-project/harp/harness/core/spec"
	"github.com/harp-project/harp/harness/live/node"
	"github.com/harp-project/harp/harness/live/peerfuzz"
	"github.com/harp-project/harp/harness/ops/report"
	"github.com/harp-project/harp/images"
)

// cmdFuzz fuzzes HAProxy's peer port (harp fuzz peers) or replays a
// finding (harp fuzz replay FILE). Exit 1: a finding; 2: one seen but not
// confirmed on a fresh node; 0: none; 3: harp could not do its work, or
// was interrupted.
func cmdFuzz(ctx context.Context, args []string) int {
	if len(args) == 0 || (args[0] != "peers" && args[0] != "replay") {
		fmt.Fprintln(os.Stderr, "usage: harp fuzz peers --haproxy SPEC [--duration D] [--seed S] [--minimize-tries N] [--reports DIR]\n       harp fuzz replay FILE --haproxy SPEC")
		return 3
	}
	a, code := parseFuzz(args[0], args[1:])
	if a == nil {
		return code
	}
	docker, builder, err := setup(ctx)
	if err != nil {
		return fail("%v", err)
	}
	img, err := builder.Ensure(ctx, a.spec)
	if err != nil {
		return fail("%v", err)
	}
	runID := "fuzz-" + report.NewID()
	defer sweepRun(ctx, docker, runID)
	n, err := startFuzzNode(ctx, docker, img, runID)
	if err != nil {
		return fail("fuzz: %v", err)
	}
	defer func() {
		// Bounded: a hung Docker must not outlast the interrupt's cleanup deadline.
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 40*time.Second)
		defer cancel()
		n.Stop(sctx)
	}()
	t := &peerfuzz.Target{Node: n}
	if a.replay {
		return fuzzReplay(ctx, t, img, a)
	}
	return fuzzPeers(ctx, t, img, a, runID)
}

// fuzzArgs are harp fuzz's parsed, checked arguments.
type fuzzArgs struct {
	replay  bool
	file    string         // replay: the input
	in      peerfuzz.Input // replay: the input, loaded
	spec    spec.Spec      // the build
	opts    peerfuzz.Options
	reports string
}

// parseFuzz reads and checks a fuzz command line before any work: nil and
// the exit code when it is refused.
func parseFuzz(sub string, args []string) (*fuzzArgs, int) {
	a := &fuzzArgs{replay: sub == "replay"}
	if a.replay {
		if len(args) == 0 || strings.HasPrefix(args[0], "-") {
			return nil, fail("fuzz replay: give the input file first: harp fuzz replay FILE --haproxy SPEC")
		}
		a.file, args = args[0], args[1:]
	}
	fs := flag.NewFlagSet("fuzz "+sub, flag.ContinueOnError)
	build := fs.String("haproxy", "", "the build spec (one)")
	duration := fs.Duration("duration", 5*time.Minute, fmt.Sprintf("how long to fuzz (peers; %s to %s)", peerfuzz.MinDuration, peerfuzz.MaxDuration))
	seed := fs.Int64("seed", 0, "the run's seed (0: from the clock; printed, so a run replays)")
	reports := fs.String("reports", "reports", "directory for the run's findings")
	tries := fs.Int("minimize-tries", 40, fmt.Sprintf("runs the minimizer may spend on a finding (1 to %d)", peerfuzz.MaxMinimizeTries))
	if !flags(fs, args) {
		return nil, 3
	}
	specs, err := oneSpec(*build) // never "(<nil>)" (#29)
	if err != nil {
		return nil, fail("fuzz: %v", err)
	}
	a.spec, a.reports = specs[0], *reports
	a.opts = peerfuzz.Options{Seed: *seed, Duration: *duration, MinimizeTries: *tries, Progress: progress.Printf}
	if a.replay {
		// A replay sends one input: the run's flags would be ignored.
		var stray []string
		fs.Visit(func(f *flag.Flag) {
			if f.Name != "haproxy" {
				stray = append(stray, "--"+f.Name)
			}
		})
		if len(stray) > 0 {
			return nil, fail("fuzz replay: %s: only for harp fuzz peers (a replay takes FILE and --haproxy)", strings.Join(stray, ", "))
		}
		if a.in, err = peerfuzz.Load(a.file); err != nil {
			return nil, fail("fuzz replay: %v", err)
		}
		return a, 0
	}
	if err := a.opts.Check(); err != nil {
		return nil, fail("fuzz: %v", err)
	}
	if err := writable(*reports); err != nil {
		return nil, fail("%v", err)
	}
	return a, 0
}

// fuzzReplay sends one stored input: 1 when the finding reproduces, 0
// when nothing is seen, 3 when interrupted.
func fuzzReplay(ctx context.Context, t *peerfuzz.Target, img *images.Image, a *fuzzArgs) int {
	progress.Printf("replaying %s (%d steps, %d bytes) on %s", a.file, len(a.in.Steps), a.in.Size(), img.Name)
	f, err := peerfuzz.Replay(ctx, t, a.in)
	switch {
	case errors.Is(err, peerfuzz.ErrInterrupted) || ctx.Err() != nil:
		fmt.Printf("%s on %s: interrupted (nothing judged)\n", a.file, img.Name)
		return 3
	case err != nil:
		return fail("fuzz replay: %v", err)
	case f == nil:
		fmt.Printf("%s on %s: nothing seen (the finding does not reproduce on this build)\n", a.file, img.Name)
		return 0
	}
	fmt.Printf("%s on %s: REPRODUCED (%s)\n", a.file, img.Name, f)
	return 1
}

// fuzzPeers fuzzes the peer port for the run's duration and keeps what it
// found under reports/<run>: the result, and a finding's input, its
// minimized form and a report for upstream.
func fuzzPeers(ctx context.Context, t *peerfuzz.Target, img *images.Image, a *fuzzArgs, runID string) int {
	opts := a.opts
	if opts.Seed == 0 {
		opts.Seed = time.Now().UnixNano() % 1_000_000_000
	}
	progress.Printf("fuzzing the peer port of %s for %s, seed %d (--seed %d replays this run)", img.Name, opts.Duration, opts.Seed, opts.Seed)
	res := peerfuzz.Fuzz(ctx, t, opts)
	code, says := res.Outcome()
	dir := filepath.Join(a.reports, runID)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fail("%v", err)
	}
	data, _ := json.MarshalIndent(res, "", "  ")
	os.WriteFile(filepath.Join(dir, "result.json"), append(data, '\n'), 0o644)
	if res.Finding == nil {
		if code == 0 {
			fmt.Printf("fuzz on %s: %s (%d bytes, %s, seed %d)\n", img.Name, says, res.Bytes, res.Took.Round(time.Second), res.Seed)
			return 0
		}
		if res.Interrupted {
			fmt.Printf("fuzz on %s: %s (seed %d)\n", img.Name, says, res.Seed)
			return code
		}
		return fail("fuzz: %s (after %d inputs)", says, res.Inputs)
	}
	// A finding, confirmed or not, is kept with what it needs to replay.
	replay := filepath.Join(dir, "finding.json")
	res.Input.Save(replay)
	if res.Minimized != nil {
		replay = filepath.Join(dir, "finding-min.json")
		res.Minimized.Save(replay)
	}
	md := fuzzReport(img, a.spec.Raw, res, replay)
	os.WriteFile(filepath.Join(dir, "finding.md"), []byte(md), 0o644)
	fmt.Printf("fuzz on %s: %s after %d inputs: %s\n  input: %s\n  report: %s\n  replay: harp fuzz replay %s --haproxy '%s'\n",
		img.Name, says, res.Inputs, res.Finding, replay, filepath.Join(dir, "finding.md"), replay, a.spec.Raw)
	return code
}

func startFuzzNode(ctx context.Context, docker *client.Client, img *images.Image, runID string) (*node.Node, error) {
	return node.Start(ctx, docker, node.Options{Name: "fuzz", Image: img, RunID: runID, Config: peerfuzz.Config(),
		Ports: []string{fmt.Sprintf("%d/tcp", peerfuzz.PeerPort)}})
}

// fuzzReport is the finding as an upstream report: the build, the config,
// the minimized message sequence, what happened and how to replay it.
func fuzzReport(img *images.Image, spec string, res peerfuzz.Result, replay string) string {
	var b strings.Builder
	f := res.Finding
	fmt.Fprintf(&b, "# Peers: %s after a crafted message sequence on the peer port\n\n", f.What)
	fmt.Fprintf(&b, "Found by `harp fuzz peers` (seed %d, input %d of the run, after %d inputs) on HAProxy %s.\n\n", res.Seed, res.Input.N, res.Inputs, img.Version)
	fmt.Fprintf(&b, "- Detector: %s\n- What happened: %s\n", f.Detector, f.What)
	_, says := res.Outcome()
	fmt.Fprintf(&b, "- Verdict: %s\n", says)
	if f.Delayed {
		fmt.Fprintf(&b, "- Seen by the control before the next input, after the detectors had looked at input %d: the node failed a little after the input.\n", res.Input.N)
	}
	alone, known := res.Alone.Get()
	switch {
	case res.Minimized != nil:
		fmt.Fprintf(&b, "- Minimized from %d steps (%d bytes) to %d steps (%d bytes) in %d runs, each on a fresh node; replayed on a restarted node: %s\n",
			len(res.Input.Steps), res.Input.Size(), len(res.Minimized.Steps), res.Minimized.Size(), res.Tries, replayed(res))
	case known && !alone:
		b.WriteString("- The triggering input alone, on a fresh node, did not trigger it again: the state earlier inputs left matters (the whole run replays with its seed).\n")
	case !known:
		fmt.Fprintf(&b, "- Not confirmed: the triggering input could not be sent alone to a fresh node (%s).\n", res.Alone.Unknown())
	}
	fmt.Fprintf(&b, "- Replay: `harp fuzz replay %s --haproxy '%s'`\n\n", replay, spec)
	seq := res.Input
	if res.Minimized != nil {
		seq = res.Minimized
	}
	b.WriteString("## Steps\n\nA client connects to the peer port and completes the handshake as the remote peer (`HAProxyS 2.1`, `local`, `remote 4242 1`; HAProxy answers 200), then sends (hex):\n\n```\n")
	b.WriteString(seq.String())
	b.WriteString("```\n\n## What the node showed\n\n```\n")
	b.WriteString(strings.TrimSpace(f.Evidence))
	b.WriteString("\n```\n\n<details><summary>Configuration</summary>\n\n```\n")
	b.WriteString(peerfuzz.Config())
	b.WriteString("```\n</details>\n\n<details><summary>haproxy -vv</summary>\n\n```\n")
	b.WriteString(strings.TrimSpace(img.VV))
	b.WriteString("\n```\n</details>\n")
	return b.String()
}

func replayed(res peerfuzz.Result) string {
	if v, ok := res.Replayed.Get(); ok {
		return fmt.Sprint(v)
	}
	return "unknown (" + res.Replayed.Unknown() + ")"
}

// Package clifixes: upstream's fixed bugs of the stats and master CLI,
// one case file each (fixtures/upstream-fixes/cli), run by harness/live/fixrun.
// Each case is a named check (upstream-fixes-cli/<case>), so
// docs/upstream-bugs.md reads every fix's verdict from the same run.
package clifixes

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/harp-project/harp/harness/core/cliout"
	"github.com/harp-project/harp/harness/core/suite"
	"github.com/harp-project/harp/harness/live/cli"
	"github.com/harp-project/harp/harness/live/fixrun"
	"github.com/harp-project/harp/harness/live/node"
	"github.com/harp-project/harp/suites/regressions/clifixes/judge"
)

var Suite = suite.Register(fixrun.Suite(fixrun.Area{
	ID:       "upstream-fixes-cli",
	Upstream: "regressions: upstream's fixed bugs of the stats CLI",
	Title:    "Stats CLI commands from upstream's fixed bugs behave as their fixes made them, and none kills the worker",
	Summary:  "one node; each case (commands on the stats socket, pipelined, aborted, oversized or idle) expects what its upstream fix made HAProxy do; cases a build is too old for are not applicable",
	Labels:   []string{"area:regressions", "area:cli"},
	Cases:    judge.Cases,
	Drives: map[string]fixrun.Drive{
		"cli-quit-releases-its-buffer":      quitLeak,
		"cli-idle-prompt-closed-on-timeout": idleClose,
		"show-fd-type-then-number":          showFD("l ", ""),
		"show-fd-any-group-form":            showFD("", "/"),
		"cli-batch-over-buffer-all-run":     overBuffer,
		"cli-httpclient-wait-no-spin":       httpclientWait,
	},
	Settles: map[string]fixrun.Settle{
		"cli-pipelined-then-close-all-run": {
			Why:   "show sess lists no CLI stream but the one asking and tpipe holds an entry of the last connection (it was accepted and ran): a released stream runs no more of its commands",
			Final: pipelineReleased,
		},
		"cli-user-level-refusal-releases-entry": {
			Why: "show sess lists no CLI stream but the one asking (the refused connection's stream is released) and show table shows entry harp-user past its expire (exp=0) and still in use: nothing is left to release it",
			Final: func(ctx context.Context, n *node.Node) (bool, error) {
				if alone, err := onlyAsker(ctx, n); err != nil || !alone {
					return false, err
				}
				t, err := n.Table(ctx, node.StatsSocket, "texp")
				if err != nil {
					return false, err
				}
				e, ok := t.Lookup("harp-user")
				return ok && e.Use > 0 && e.Exp <= 0, nil
			},
		},
	},
}))

// quitLeak counts the trash pool's used buffers around judge.Quits
// connections that send only quit.
func quitLeak(ctx context.Context, n *node.Node) (string, error) {
	before, err := n.Pool(ctx, node.StatsSocket, "trash")
	if err != nil {
		return "", err
	}
	addr, err := n.Addr(ctx, node.StatsPort) // once, not a lookup per connection
	if err != nil {
		return "", err
	}
	for i := range judge.Quits {
		if _, err := cli.Raw(ctx, addr, "quit\n", cli.RawOptions{Name: node.StatsPort, Wait: fixrun.AnswerWait}); err != nil {
			return "", fmt.Errorf("quit %d: %w", i+1, err)
		}
	}
	after, err := n.Pool(ctx, node.StatsSocket, "trash")
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("trash used %d -> %d after %d quit", before.Used, after.Used, judge.Quits), nil
}

// pipelineReleased says whether the pipelines' table can still grow: not
// once every CLI stream but the asking one is gone and the last
// connection's commands began to run (an entry of its key range: a
// connection still in the accept queue has no stream yet).
func pipelineReleased(ctx context.Context, n *node.Node) (bool, error) {
	if alone, err := onlyAsker(ctx, n); err != nil || !alone {
		return false, err
	}
	t, err := n.Table(ctx, node.StatsSocket, "tpipe")
	if err != nil {
		return false, err
	}
	last := fmt.Sprintf("10.%d.0.", pipelines)
	for _, k := range t.Keys() {
		if strings.HasPrefix(k, last) {
			return true, nil
		}
	}
	return false, nil
}

// onlyAsker says whether show sess lists no CLI stream but the one that
// asks: every earlier connection to a CLI socket released.
func onlyAsker(ctx context.Context, n *node.Node) (bool, error) {
	ss, err := n.Sessions(ctx, node.StatsSocket)
	if err != nil {
		return false, err
	}
	cli := 0
	for _, s := range ss {
		if s.Has("fe=GLOBAL") {
			cli++
		}
	}
	return cli <= 1, nil
}

// pipelines: the case's connections (its times).
var pipelines = func() int {
	for _, c := range judge.Cases {
		if c.ID == "cli-pipelined-then-close-all-run" {
			return c.Times
		}
	}
	panic("clifixes: no case cli-pipelined-then-close-all-run")
}()

// idleClose: an interactive session given a 1s timeout, then idle.
func idleClose(ctx context.Context, n *node.Node) (string, error) {
	conn, err := n.Dial(ctx, node.StatsPort)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("prompt\nset timeout cli 1\n")); err != nil {
		return "", fmt.Errorf("sending: %w", err)
	}
	start := time.Now()
	got, err := cli.ReadToClose(conn, 6*time.Second)
	switch {
	case cli.Timeout(err) && len(got) == 0:
		return "", fmt.Errorf("no answer to prompt within 6s")
	case cli.Timeout(err):
		return fmt.Sprintf("still open after 6s (answered %q)", got), nil
	case cli.FateOf(err) == cli.Reset:
		return "", fmt.Errorf("the session was reset (%v), neither closed by HAProxy nor left open", err)
	}
	return fmt.Sprintf("closed by haproxy after %.1fs", time.Since(start).Seconds()), nil
}

// fdLineRe is a show fd line's fd.
var fdLineRe = regexp.MustCompile(`(?m)^\s*(\d+)\s*:`)

// showFD finds a listener's fd, then asks `show fd <filter><prefix><fd>`.
func showFD(filter, prefix string) fixrun.Drive {
	return func(ctx context.Context, n *node.Node) (string, error) {
		out, err := n.Stats(ctx, "show fd l")
		if err != nil {
			return "", err
		}
		m := fdLineRe.FindStringSubmatch(out)
		if m == nil {
			return "", fmt.Errorf("show fd l lists no listener: %q", fixrun.OneLine(out))
		}
		one, err := n.Stats(ctx, "show fd "+filter+prefix+m[1])
		if err != nil {
			return "", err
		}
		return "fd " + m[1] + "\n" + one, nil
	}
}

// batchLines: enough `set table` lines to exceed the CLI's 16 KB input
// buffer by half.
const batchLines = 600

// overBuffer writes the whole batch on one prompt-mode connection without
// closing it, reads the answer to the CLI's close (its quit) for up to
// 10 s, and then counts tbatch on another connection: the entries, not
// the read, say whether every line ran.
func overBuffer(ctx context.Context, n *node.Node) (string, error) {
	addr, err := n.DirectAddr(ctx, node.StatsPort)
	if err != nil {
		return "", err
	}
	// The worker stopped while the batch is written, so that the CLI
	// finds it whole on its first read and fills its input buffer, as a
	// client faster than the CLI does; running, the worker might read
	// the batch in pieces, as they come.
	pid, err := n.CurrentWorker(ctx)
	if err != nil {
		return "", err
	}
	if err := n.KillWorker(ctx, pid, syscall.SIGSTOP); err != nil {
		return "", fmt.Errorf("stopping the worker: %w", err)
	}
	stopped := true
	resume := func() error {
		if !stopped {
			return nil
		}
		stopped = false
		return n.KillWorker(ctx, pid, syscall.SIGCONT)
	}
	defer resume()
	c, err := cli.Dial(ctx, addr, "the admin stats socket")
	if err != nil {
		return "", err
	}
	defer c.Close()
	var b strings.Builder
	b.WriteString("prompt\n")
	for i := range batchLines {
		fmt.Fprintf(&b, "set table tbatch key k%d data.gpc0 1\n", i)
	}
	b.WriteString("quit\n")
	if _, err := c.Write([]byte(b.String())); err != nil {
		return "", fmt.Errorf("writing the batch: %w", err)
	}
	if err := resume(); err != nil {
		return "", fmt.Errorf("resuming the worker: %w", err)
	}
	_, rerr := cli.ReadToClose(c, 10*time.Second)
	fate := cli.FateOf(rerr)
	// The count, once it reached the batch or stopped growing: a slow
	// worker still running the batch is no frozen CLI. A count that
	// still grows at the end is harp's too-early reading, unknown.
	used := func() (int, error) {
		t, err := n.Table(ctx, node.StatsSocket, "tbatch")
		return t.Used, err
	}
	last, err := node.UntilErr(ctx, 10*time.Second, 250*time.Millisecond, used, func(v int) bool { return v == batchLines })
	if errors.Is(err, node.ErrDeadline) {
		select {
		case <-time.After(time.Second): // the window a frozen count must stay the same over
		case <-ctx.Done():
			return "", ctx.Err()
		}
		again, err2 := used()
		if err2 != nil {
			return "", err2
		}
		if again != last {
			return "", fmt.Errorf("tbatch still growing (%d, then %d a second later) 10 s after the batch: the worker is too slow to tell", last, again)
		}
		err = nil
	}
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("entries set: %d of %d; the batch's connection: %s", last, batchLines, fate), nil
}

// httpclientWait measures the idle worker, sends an httpclient request to
// the silent frontend with a command pipelined behind it, half-closes,
// waits for the silent frontend to hold the request's connection (the
// command is waiting then), and measures again.
func httpclientWait(ctx context.Context, n *node.Node) (string, error) {
	idle, err := n.LoopsPerSecond(ctx, node.StatsSocket, time.Second)
	if err != nil {
		return "", fmt.Errorf("the idle worker's loops: %w", err)
	}
	addr, err := n.DirectAddr(ctx, node.StatsPort)
	if err != nil {
		return "", err
	}
	c, err := cli.Dial(ctx, addr, "the admin stats socket")
	if err != nil {
		return "", err
	}
	defer c.Close()
	port := strings.TrimSuffix(fixrun.Port("clisilent"), "/tcp")
	if _, err := fmt.Fprintf(c, "expert-mode on; httpclient GET http://127.0.0.1:%s/; show info\n", port); err != nil {
		return "", fmt.Errorf("writing the commands: %w", err)
	}
	if err := c.CloseWrite(); err != nil {
		return "", err
	}
	held := func() (int64, error) {
		rows, err := n.Stat(ctx, node.StatsSocket)
		if err != nil {
			return 0, err
		}
		fe, ok := cliout.FindStat(rows, "clisilent", "FRONTEND")
		if !ok {
			return 0, fmt.Errorf("no frontend clisilent in show stat")
		}
		return fe.Int("scur"), nil
	}
	if _, err := node.UntilErr(ctx, 5*time.Second, 50*time.Millisecond, held, func(c int64) bool { return c >= 1 }); err != nil {
		return "", fmt.Errorf("the HTTP client's request never reached the silent frontend (this build may have no httpclient command): %w", err)
	}
	waiting, err := n.LoopsPerSecond(ctx, node.StatsSocket, time.Second)
	if err != nil {
		return "", fmt.Errorf("the worker's loops with the request waiting: %w", err)
	}
	// The request's session on the silent frontend is shut, so that the
	// command ends and a CLI woken in a loop stops before the next case
	// (left alone, 2.6.0's loop aborts the worker some seconds later).
	if err := endSilent(ctx, n); err != nil {
		return "", err
	}
	// A worker still looping once the command ended is this case's
	// aftermath: wait for the loop to stop (at most 10 s) so that an abort
	// it brings happens here, not in a later case. A worker that died
	// meanwhile is the suite's to see after this case.
	_ = node.Poll(ctx, 10*time.Second, 200*time.Millisecond, func() (bool, error) {
		r, err := n.LoopsPerSecond(ctx, node.StatsSocket, 500*time.Millisecond)
		return err != nil || r <= spinSettled, nil
	})
	return fmt.Sprintf("loops per second: %d idle, %d with the request waiting after the half-close", idle, waiting), nil
}

// spinSettled: a worker below this many loops a second has stopped
// looping (the judge's floor for a spin is higher).
const spinSettled = 1000

// endSilent shuts the sessions the silent frontend holds.
func endSilent(ctx context.Context, n *node.Node) error {
	streams, err := n.Sessions(ctx, node.StatsSocket)
	if err != nil {
		return fmt.Errorf("show sess, to end the request the HTTP client waits on: %w", err)
	}
	for _, st := range streams {
		if st.Has("fe=clisilent") {
			if _, err := n.Stats(ctx, "shutdown session "+st.Ptr); err != nil {
				return fmt.Errorf("shutdown session %s: %w", st.Ptr, err)
			}
		}
	}
	return nil
}

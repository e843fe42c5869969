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
		"cli-quit-releases-its-buffer":            quitLeak,
		"cli-idle-prompt-closed-on-timeout":       idleClose,
		"show-fd-type-then-number":                showFD("l ", ""),
		"show-fd-any-group-form":                  showFD("", "/"),
		"cli-batch-over-buffer-all-run":           overBuffer,
		"cli-httpclient-wait-no-spin":             httpclientWait,
		"cli-old-worker-idle-after-reload":        oldWorkerAfterReload,
		"del-server-with-retrying-stream-refused": delServerRetrying,
		"cli-newline-chained-commands-warned":     chainedWarning,
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
	held := func() (int64, error) { return n.FrontendSessions(ctx, "clisilent") }
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

// oldWorkerAfterReload holds a connection on frontend hold (it waits a
// minute for a request that never comes), so that the old worker stays
// after a reload, then measures the old worker's loops per second over
// 1 s: an old worker with nothing to do but wait for that session is idle.
// One that died meanwhile is fixrun's to see.
func oldWorkerAfterReload(ctx context.Context, n *node.Node) (string, error) {
	r, died, done, err := fixrun.ReloadHoldingOld(ctx, n)
	defer done()
	if err != nil || died != "" {
		return died, err
	}
	rate, err := n.LoopsPerSecond(ctx, r.OldPID, time.Second)
	if err != nil {
		return "", fmt.Errorf("the old worker %d: %w", r.OldPID, err)
	}
	return fmt.Sprintf("the old worker looped %d times a second after the reload", rate), nil
}

// delServerRetrying sends a request to frontend delsrv, whose server
// refuses connections, and once show stat counts a retry to that server
// and no error yet (the stream waits a second between two attempts, still
// targeting it), puts the server in maintenance and deletes it.
// The answer is del server's; the request is left to end on its own.
func delServerRetrying(ctx context.Context, n *node.Node) (string, error) {
	port := fixrun.Port("delsrv")
	addr, err := n.DirectAddr(ctx, port)
	if err != nil {
		return "", err
	}
	c, err := cli.Dial(ctx, addr, port)
	if err != nil {
		return "", err
	}
	defer c.Close()
	if _, err := c.Write([]byte("GET / HTTP/1.1\r\nhost: harp\r\n\r\n")); err != nil {
		return "", fmt.Errorf("the request: %w", err)
	}
	// wretr counts each retry; econ only the attempt that gives up: a
	// retry counted with no error yet is a stream waiting to try again.
	type counts struct{ retries, errors int64 }
	read := func() (counts, error) {
		rows, err := n.Stat(ctx, node.StatsSocket)
		if err != nil {
			return counts{}, err
		}
		sv, ok := cliout.FindStat(rows, "bdelsrv", "s1")
		if !ok {
			return counts{}, fmt.Errorf("no server bdelsrv/s1 in show stat")
		}
		return counts{sv.Int("wretr"), sv.Int("econ")}, nil
	}
	c0, err := node.UntilErr(ctx, 5*time.Second, 20*time.Millisecond, read, func(c counts) bool { return c.retries >= 1 })
	if err != nil {
		return "", fmt.Errorf("no retry of a connection to bdelsrv/s1 counted: %w", err)
	}
	if c0.errors > 0 {
		return "", fmt.Errorf("the request gave up on bdelsrv/s1 (econ %d) before it could be deleted under it", c0.errors)
	}
	out, err := n.Stats(ctx, "set server bdelsrv/s1 state maint; del server bdelsrv/s1")
	if err != nil {
		return "", err
	}
	return out, nil
}

// chainedWarning sends two commands on two lines in one non-interactive
// session, then puts server bmark/s1 in maintenance: the worker prints
// that server's warning after any warning the chained commands caused
// (one process, one stderr, in order), so once that line shows, the
// output before it says whether the build warned. The warning comes once
// per process: the whole output counts, not only this trial's.
func chainedWarning(ctx context.Context, n *node.Node) (string, error) {
	addr, err := n.Addr(ctx, node.StatsPort)
	if err != nil {
		return "", err
	}
	rep, err := cli.Raw(ctx, addr, "show version\nshow info\n", cli.RawOptions{Name: node.StatsPort, Wait: fixrun.AnswerWait})
	if err != nil {
		return "", fmt.Errorf("the chained commands: %w", err)
	}
	if !strings.Contains(rep.Text, "Name: HAProxy") {
		return "", fixrun.NotApplicable(fmt.Sprintf("the build answered the first line only (%q): it runs no command chained with a new line, so it owes no warning", fixrun.OneLine(rep.Text)))
	}
	if _, err := n.Stats(ctx, "set server bmark/s1 state maint"); err != nil {
		return "", err
	}
	var logs string
	if err := node.Poll(ctx, 10*time.Second, 100*time.Millisecond, func() (bool, error) {
		l, err := n.Logs(ctx)
		logs = l
		return err == nil && strings.Contains(l, "bmark/s1 is going DOWN"), nil
	}); err != nil {
		return "", fmt.Errorf("the worker never printed server bmark/s1's maintenance warning (10 s), so its output cannot tell a missing warning: %w", err)
	}
	if _, err := n.Stats(ctx, "set server bmark/s1 state ready"); err != nil {
		return "", err
	}
	// Messages are cut at the marker, not at line ends: the chained
	// commands' warning ends with no line feed, so Docker shows it on the
	// marker's line.
	before, _, _ := strings.Cut(logs, "Server bmark/s1 is going DOWN")
	warned := warnings(before)
	if len(warned) == 0 {
		return "both commands answered; the worker warned of nothing before server bmark/s1's maintenance", nil
	}
	return "both commands answered; the worker's warnings before server bmark/s1's maintenance: " + strings.Join(warned, " | "), nil
}

// pidTag opens a message: "(9) : ".
var pidTag = regexp.MustCompile(`^\s*\(\d+\)\s*:\s*`)

// warnings are the texts of the [WARNING] messages in out, each up to the
// next line feed or the next message's tag, without its process id.
func warnings(out string) []string {
	var ws []string
	for _, part := range strings.Split(out, "[WARNING]")[1:] {
		if i := strings.IndexAny(part, "\n"); i >= 0 {
			part = part[:i]
		}
		for _, tag := range []string{"[NOTICE]", "[ALERT]"} {
			part, _, _ = strings.Cut(part, tag)
		}
		if part = strings.TrimSpace(pidTag.ReplaceAllString(part, "")); part != "" {
			ws = append(ws, part)
		}
	}
	return ws
}

// Package listenerfixes: upstream's fixed bugs of listeners (sharded binds,
// a full frontend under a session rate limit), one case file each
// (fixtures/upstream-fixes/listeners), run by harness/live/fixrun. Each case is
// a named check (upstream-fixes-listeners/<case>), so docs/upstream-bugs.md
// reads every fix's verdict from the same run.
package listenerfixes

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/harp-project/harp/harness/core/cliout"
	"github.com/harp-project/harp/harness/core/suite"
	"github.com/harp-project/harp/harness/live/cli"
	"github.com/harp-project/harp/harness/live/fixrun"
	"github.com/harp-project/harp/harness/live/node"
	"github.com/harp-project/harp/suites/regressions/listenerfixes/judge"
)

var Suite = suite.Register(fixrun.Suite(fixrun.Area{
	ID:       "upstream-fixes-listeners",
	Upstream: "regressions: upstream's fixed listener bugs",
	Title:    "Sharded binds and a full, rate-limited frontend behave as upstream's fixes made them, and none kills the worker",
	Summary:  "one node, and nodes of their own for sharded binds; each case (show stat of sharded listeners, a connection queued behind a full frontend) expects what its upstream fix made HAProxy do; cases a build is too old for are not applicable",
	Labels:   []string{"area:regressions", "area:listeners"},
	Cases:    judge.Cases,
	Drives: map[string]fixrun.Drive{
		"frontend-full-then-rate-limited-resumes": fullThenLimited,
		"old-worker-no-accept-wakeups":            oldWorkerWakeups,
		"single-shard-groups-keeps-accepting":     singleShardGroups,
	},
}))

// fullThenLimited: A fills the frontend; B waits in the backlog; once the
// listener stopped accepting (show fd: l.st LIM or FUL), A leaves while
// the session rate is still at its limit.
func fullThenLimited(ctx context.Context, n *node.Node) (string, error) {
	limited := fixrun.Port("limited")
	// Both on the node's own address: a dial that returned is a
	// connection in HAProxy's backlog, not only Docker's port proxy's.
	addr, err := n.DirectAddr(ctx, limited)
	if err != nil {
		return "", err
	}
	a, err := cli.Dial(ctx, addr, limited)
	if err != nil {
		return "", fmt.Errorf("A: %w", err)
	}
	defer a.Close()
	conns := func() (int64, error) { return n.FrontendSessions(ctx, "limited") }
	if _, err := node.UntilErr(ctx, 5*time.Second, 50*time.Millisecond, conns, func(c int64) bool { return c == 1 }); err != nil {
		return "", fmt.Errorf("A was never accepted: %w", err)
	}
	b, err := cli.Dial(ctx, addr, limited)
	if err != nil {
		return "", fmt.Errorf("B: %w", err)
	}
	defer b.Close()
	if _, err := b.Write([]byte("GET / HTTP/1.0\r\n\r\n")); err != nil {
		return "", fmt.Errorf("B's request: %w", err)
	}
	// The trigger's order, observed rather than slept for (f084f4d paused
	// 100 ms): HAProxy saw B and stopped accepting before A leaves. On
	// 2.6.12 A leaving earlier than that lets B in, bug or not.
	state := func() (string, error) {
		out, err := n.Stats(ctx, "show fd")
		if err != nil {
			return "", err
		}
		st, err := cliout.ListenerStates(out)
		return st["limited"], err
	}
	st, err := node.UntilErr(ctx, 2*time.Second, 20*time.Millisecond, state, func(s string) bool { return s == "LIM" || s == "FUL" })
	if err != nil {
		return "", fmt.Errorf("the listener never stopped accepting with B waiting (l.st=%s): %w", st, err)
	}
	// B waits, not accepted: the frontend still holds A alone.
	if c, err := conns(); err != nil || c != 1 {
		return "", fmt.Errorf("before A leaves, the frontend must hold A alone: %d sessions (%v)", c, err)
	}
	a.Close()
	start := time.Now()
	got, err := cli.ReadToClose(b, 6*time.Second)
	if answered, err := bFate(got, err); answered || err != nil {
		return fmt.Sprintf("answered after %.1fs", time.Since(start).Seconds()), err
	}
	c, err := conns()
	if err != nil {
		return "", fmt.Errorf("B unanswered, and show stat after it: %w", err)
	}
	return fmt.Sprintf("B unanswered after 6s (%q), frontend sessions %d", got, c), nil
}

// bFate reads B's read to its close: answered (a response came), or left
// waiting (still open, nothing); anything else (a reset, a close without
// a response) is harp's failure to tell (f084f4d dropped the read's error:
// a reset read as B unanswered).
func bFate(got []byte, err error) (answered bool, unknown error) {
	switch {
	case strings.HasPrefix(string(got), "HTTP/1."):
		return true, nil
	case cli.FateOf(err) != cli.Open:
		return false, fmt.Errorf("B was %s without a response (%v, read %q): not the queued connection left unanswered", cli.FateOf(err), err, got)
	}
	return false, nil
}

// oldWorkerWakeups holds a connection on frontend hold (it waits a minute
// for a request that never comes), so that the old worker stays after a
// reload, then makes judge.WakeConnections requests to frontend wake on
// fresh connections and reads the old worker's show activity before and
// after them. Its accepted count must not move: a connection the old
// worker took would make its wakeups no measure of the new worker's.
func oldWorkerWakeups(ctx context.Context, n *node.Node) (string, error) {
	r, died, done, err := fixrun.ReloadHoldingOld(ctx, n)
	defer done()
	if err != nil || died != "" {
		return died, err
	}
	type counts struct{ drops, accepted int64 }
	read := func() (counts, error) {
		out, err := n.Worker(ctx, r.OldPID, "show activity")
		if err != nil {
			return counts{}, fmt.Errorf("the old worker's show activity: %w", err)
		}
		d, err := cliout.Activity(out, "poll_drop_fd")
		if err != nil {
			return counts{}, err
		}
		a, err := cliout.Activity(out, "accepted")
		return counts{d, a}, err
	}
	before, err := read()
	if err != nil {
		return "", err
	}
	wake := fixrun.Port("wake")
	waddr, err := n.DirectAddr(ctx, wake)
	if err != nil {
		return "", err
	}
	for i := 1; i <= judge.WakeConnections; i++ {
		rep, err := cli.Raw(ctx, waddr, "GET / HTTP/1.0\r\n\r\n", cli.RawOptions{Name: wake, KeepOpen: true, Wait: 5 * time.Second})
		if err != nil {
			return "", fmt.Errorf("request %d: %w", i, err)
		}
		if !strings.HasPrefix(rep.Text, "HTTP/1.1 200") && !strings.HasPrefix(rep.Text, "HTTP/1.0 200") {
			return "", fmt.Errorf("request %d was answered %q: the new worker does not serve", i, fixrun.OneLine(rep.Text))
		}
	}
	after, err := read()
	if err != nil {
		return "", err
	}
	// The second reading is itself one connection the old worker accepted
	// (from the master, on its socketpair).
	if took := after.accepted - before.accepted - 1; took > 0 {
		return "", fmt.Errorf("the old worker accepted %d of the connections: it still listened, its wakeups measure nothing", took)
	}
	return fmt.Sprintf("poll_drop_fd of the old worker: +%d over %d connections served by the new worker (%d before)", after.drops-before.drops, judge.WakeConnections, before.drops), nil
}

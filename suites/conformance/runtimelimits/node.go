package runtimelimits

// What the suite reads of its node around a round: its own code (#43),
// moved from harness/live/node, built on the node's primitives.

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/harp-project/harp/harness/core/cliout"
	"github.com/harp-project/harp/harness/core/obs"
	"github.com/harp-project/harp/harness/live/node"
	"github.com/harp-project/harp/suites/conformance/runtimelimits/judge"
)

// roundStart is a point in a node's run from which a stretch (a round of
// runtime commands, a trigger) is read afterwards (aftermath): the worker
// current then, and the output so far, without which earlier stretches'
// watchdog lines would read as this one's.
type roundStart struct {
	Worker int
	Logs   string
}

// readBefore reads a roundStart of what ("the round"). Its error says which read
// failed, as an unmet precondition's reason; the worker is kept when only
// the output could not be read.
func readBefore(ctx context.Context, n *node.Node, what string) (roundStart, error) {
	w, err := n.CurrentWorker(ctx)
	if err != nil {
		return roundStart{}, fmt.Errorf("before %s: %w", what, err)
	}
	logs, err := n.Logs(ctx)
	if err != nil {
		return roundStart{Worker: w}, fmt.Errorf("the worker's output before %s could not be read: %w", what, err)
	}
	return roundStart{Worker: w, Logs: logs}, nil
}

// aftermath reads what the stretch since b (what: "the round") left
// (judge.Aftermath): the watchdog's lines in the output since, b's
// worker's exit in the master's log, the current worker, and whether the
// master exited; a reading that fails leaves its field empty and the
// first is Unread. When the worker's CLI was stuck during the stretch,
// which is evidence already, HAProxy's watchdog says more within seconds
// (a warning, then a panic and the worker's exit): it first waits up to
// 10 s (reading every 200 ms) for a panic in the output.
func aftermath(ctx context.Context, n *node.Node, b roundStart, what string, stuck bool) judge.Aftermath {
	a := judge.Aftermath{WorkerBefore: b.Worker}
	if stuck {
		n.WaitLogsAfter(ctx, b.Logs, 10*time.Second, 200*time.Millisecond, func(fresh string) bool {
			return len(cliout.ParsePanics(fresh)) > 0
		})
	}
	if fresh, err := n.LogsAfter(ctx, b.Logs); err != nil {
		a.NotRead("the worker's output after %s: %v", what, err)
	} else {
		a.Fresh, a.Stalls, a.Panics = fresh, cliout.ParseStalls(fresh), cliout.ParsePanics(fresh)
	}
	if exits, err := n.Exits(ctx); err != nil {
		a.NotRead("the master's log of worker exits: %v", err)
	} else if e, ok := cliout.ExitOf(exits, b.Worker); ok {
		a.Died = fmt.Sprintf("worker %d %s", e.PID, e.Ended())
	}
	if cur, err := n.CurrentWorker(ctx); err != nil {
		a.NotRead("the current worker after %s: %v", what, err) // explained if the master is gone
	} else {
		a.WorkerAfter = cur
	}
	a.Master = obs.Opt(n.MasterExit(ctx))
	return a
}

// askTimed runs cmd on a worker, waited for at most wait (AskWithin), and
// records it as a judge reads it (judge.Call): a CLI that does not
// answer is evidence, not a harness error. A command not answered within
// bound gets its control: whether the master's CLI, another process on
// the same node and path, answers within bound (MasterAnswers); when it
// does not either and the worker gave no answer, the node, not the
// worker, is out of reach, which is unknown. A command that never reached
// the socket is unknown too: HAProxy never saw it.
func askTimed(ctx context.Context, n *node.Node, pid int, cmd string, bound, wait time.Duration) judge.Call {
	a := n.AskWithin(ctx, pid, cmd, wait)
	c := judge.Call{Command: cmd, Took: a.Took, Answer: a.Answer}
	switch {
	case a.Ended:
		c.Answer, c.Err = "", "the run ended"
	case a.NotSent():
		c.Err = judge.NotSent + a.Err.Error()
		c.Control = obs.Opt(obs.Failure[bool]("%q %s", cmd, c.Err))
		return c
	case a.Err != nil:
		c.Err = a.Err.Error()
	}
	if c.Late(bound) {
		merr := n.MasterAnswers(ctx, bound)
		c.Control = obs.Opt(obs.Value(merr == nil))
		if merr != nil && c.Err != "" {
			c.Control = obs.Opt(obs.Failure[bool]("the master's CLI did not answer either (%s): the node, not the worker, is out of reach", merr))
		}
	}
	return c
}

// statInt is one counter of show stat (col of proxy's row server:
// "FRONTEND", "BACKEND" or a server's name), read within bound. A row or
// column that is missing or empty is an error.
func statInt(ctx context.Context, n *node.Node, pid int, proxy, server, col string, bound time.Duration) (int64, error) {
	cctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	rows, err := n.Stat(cctx, pid)
	if err != nil {
		return 0, err
	}
	r, ok := cliout.FindStat(rows, proxy, server)
	if !ok || r.Fields[col] == "" {
		return 0, fmt.Errorf("show stat has no %s for %s", col, statRowName(proxy, server))
	}
	return r.Int(col), nil
}

// statRowName says a row of show stat: "frontend web", "server be/s1".
func statRowName(proxy, server string) string {
	switch server {
	case "FRONTEND", "BACKEND":
		return strings.ToLower(server) + " " + proxy
	}
	return "server " + proxy + "/" + server
}

// waitStatRow reads show stat every interval until ok holds for the row
// of proxy and server ("FRONTEND", "BACKEND" or a server's name; a zero
// row when show stat lacks it) or timeout passes: the last row read, and
// whether ok held for it. A failed read counts as not yet (Until). It is
// the wait for a runtime command's effect on a proxy (a frontend's slim
// after `set maxconn frontend`, its status after `disable frontend`, a
// count that reached a value).
func waitStatRow(ctx context.Context, n *node.Node, pid int, proxy, server string, timeout, interval time.Duration, ok func(cliout.StatRow) bool) (cliout.StatRow, bool) {
	row := func(rows []cliout.StatRow) cliout.StatRow {
		r, _ := cliout.FindStat(rows, proxy, server)
		return r
	}
	rows, held := node.Until(ctx, timeout, interval, func() ([]cliout.StatRow, error) { return n.Stat(ctx, pid) },
		func(rows []cliout.StatRow) bool { return ok(row(rows)) })
	return row(rows), held
}

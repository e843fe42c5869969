package node

import (
	"context"
	"fmt"
	"time"

	"github.com/harp-project/harp/harness/core/cliout"
	"github.com/harp-project/harp/harness/core/obs"
)

// Before is a point in a node's run from which a stretch (a round of
// runtime commands, a trigger) is read afterwards (Aftermath): the worker
// current then, and the output so far, without which earlier stretches'
// watchdog lines would read as this one's.
type Before struct {
	Worker int
	Logs   string
}

// Before reads a Before of what ("the round"). Its error says which read
// failed, as an unmet precondition's reason; the worker is kept when only
// the output could not be read.
func (n *Node) Before(ctx context.Context, what string) (Before, error) {
	w, err := n.CurrentWorker(ctx)
	if err != nil {
		return Before{}, fmt.Errorf("before %s: %w", what, err)
	}
	logs, err := n.Logs(ctx)
	if err != nil {
		return Before{Worker: w}, fmt.Errorf("the worker's output before %s could not be read: %w", what, err)
	}
	return Before{Worker: w, Logs: logs}, nil
}

// Aftermath reads what the stretch since b (what: "the round") left
// (cliout.Aftermath): the watchdog's lines in the output since, b's
// worker's exit in the master's log, the current worker, and whether the
// master exited; a reading that fails leaves its field empty and the
// first is Unread. When the worker's CLI was stuck during the stretch,
// which is evidence already, HAProxy's watchdog says more within seconds
// (a warning, then a panic and the worker's exit): it first waits up to
// 10 s (reading every 200 ms) for a panic in the output.
func (n *Node) Aftermath(ctx context.Context, b Before, what string, stuck bool) cliout.Aftermath {
	a := cliout.Aftermath{WorkerBefore: b.Worker}
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

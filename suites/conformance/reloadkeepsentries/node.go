package reloadkeepsentries

// What the suite reads and does on its node around a reload: its own code
// (#43), moved from harness/live/node and harness/live/remotepeer.

import (
	"context"
	"fmt"
	"time"

	"github.com/harp-project/harp/harness/core/obs"
	"github.com/harp-project/harp/harness/live/node"
	"github.com/harp-project/harp/harness/live/peers"
	"github.com/harp-project/harp/harness/live/remotepeer"
	"github.com/harp-project/harp/suites/conformance/reloadkeepsentries/judge"
)

// workerAge bounds a worker's age, from one read of show proc.
type workerAge struct {
	// Uptime is show proc's, in whole seconds: at most the true age; -1
	// when show proc did not list the worker.
	Uptime  time.Duration
	started time.Time // before the node started: no worker is older
	asked   time.Time // when show proc was asked
}

// ageOf reads show proc for a worker's age; started is a time before the
// node started (before its container).
func ageOf(ctx context.Context, n *node.Node, pid int, started time.Time) (workerAge, error) {
	asked := time.Now()
	procs, err := n.Procs(ctx)
	if err != nil {
		return workerAge{}, err
	}
	a := workerAge{Uptime: -1, started: started, asked: asked}
	if p, ok := procs.Find(pid); ok {
		a.Uptime = p.Uptime
	}
	return a, nil
}

// bound is at least the worker's true age at the moment at: the time
// since started, or, tighter on a loaded machine where starting the node
// took seconds, the uptime (a start and a now both truncated: under a
// second short) plus a second plus what passed since show proc was asked.
func (a workerAge) bound(at time.Time) time.Duration {
	b := at.Sub(a.started)
	if a.Uptime >= 0 {
		b = min(b, a.Uptime+time.Second+at.Sub(a.asked))
	}
	return b
}

// waitWorkerAge polls show proc every 200 ms until the worker is at least
// age old, for at most age + 10 s; a read that fails counts as not yet.
// An age of 0 or less is no wait: nothing is read.
func waitWorkerAge(ctx context.Context, n *node.Node, pid int, age time.Duration) error {
	if age <= 0 {
		return nil
	}
	return node.Poll(ctx, age+10*time.Second, 200*time.Millisecond, func() (bool, error) {
		procs, err := n.Procs(ctx)
		if err != nil {
			return false, nil
		}
		p, ok := procs.Find(pid)
		return ok && p.Uptime >= age, nil
	})
}

// tableLoss reads each table on a worker, one after another, and says
// what each lacks of keys with their values of field (judge.TableLoss);
// unknown when a table could not be read.
func tableLoss(ctx context.Context, n *node.Node, pid int, tables []string, field string, keys, values []string) obs.Of[judge.TableLoss] {
	l := judge.TableLoss{Lost: map[string]int{}, Wrong: map[string]int{}}
	for _, table := range tables {
		tb, err := n.Table(ctx, pid, table)
		if err != nil {
			return obs.From(judge.TableLoss{}, err)
		}
		l.Add(table, tb, field, keys, values)
	}
	return obs.Value(l)
}

// setAndReadBack writes keys with their values of field into every table
// on pid (SetEntries, table after table), then reads them all back on
// readPID (tableLoss): entries a trigger must keep are first seen there,
// or losing them says nothing. A write HAProxy refuses is the unmet
// precondition (its text in unmet, RefusalUnmet); err is harp's failure,
// to write or to read the tables back.
func setAndReadBack(ctx context.Context, n *node.Node, pid, readPID int, tables []string, field string, keys, values []string) (back judge.TableLoss, unmet string, err error) {
	for _, table := range tables {
		if err := node.RefusalUnmet(n.SetEntries(ctx, pid, table, field, keys, values), &unmet); err != nil || unmet != "" {
			return back, unmet, err
		}
	}
	read := tableLoss(ctx, n, readPID, tables, field, keys, values)
	if l, ok := read.Get(); ok {
		return l, "", nil
	}
	return back, "", fmt.Errorf("reading back the entries written: %s", read.Why)
}

// keepUpOn plays the remote peer remote of section on n, whose local peer
// local listens on the node's published port (KeepUp, with the default
// options), and waits up to timeout for show peers to show it established.
// unmet says why it is not up ("" when it is): the port could not be read,
// or it was never established, a precondition of whatever needs it up.
// stop ends it (a no-op when the port could not be read).
func keepUpOn(ctx context.Context, n *node.Node, port, section, local, remote string, timeout time.Duration) (stop func(), unmet string) {
	addr, err := n.Addr(ctx, port)
	if err != nil {
		return func() {}, err.Error()
	}
	p := &remotepeer.Probe{Node: n, Addr: addr, Section: section, Local: local, Remote: remote}
	stop = p.KeepUp(ctx, peers.DefaultOptions)
	if _, err := p.Established(ctx, timeout); err != nil {
		return stop, fmt.Sprintf("the remote peer played by harp was never established (%s)", timeout)
	}
	return stop, ""
}

package node

import (
	"context"
	"time"
)

// WorkerAge bounds a worker's age, from one read of show proc.
type WorkerAge struct {
	// Uptime is show proc's, in whole seconds: at most the true age; -1
	// when show proc did not list the worker.
	Uptime  time.Duration
	started time.Time // before the node started: no worker is older
	asked   time.Time // when show proc was asked
}

// AgeOf reads show proc for a worker's age; started is a time before the
// node started (before its container).
func (n *Node) AgeOf(ctx context.Context, pid int, started time.Time) (WorkerAge, error) {
	asked := time.Now()
	procs, err := n.Procs(ctx)
	if err != nil {
		return WorkerAge{}, err
	}
	a := WorkerAge{Uptime: -1, started: started, asked: asked}
	if p, ok := procs.Find(pid); ok {
		a.Uptime = p.Uptime
	}
	return a, nil
}

// Bound is at least the worker's true age at the moment at: the time
// since started, or, tighter on a loaded machine where starting the node
// took seconds, the uptime (a start and a now both truncated: under a
// second short) plus a second plus what passed since show proc was asked.
func (a WorkerAge) Bound(at time.Time) time.Duration {
	b := at.Sub(a.started)
	if a.Uptime >= 0 {
		b = min(b, a.Uptime+time.Second+at.Sub(a.asked))
	}
	return b
}

// WaitWorkerAge polls show proc every 200 ms until the worker is at least
// age old, for at most age + 10 s; a read that fails counts as not yet.
// An age of 0 or less is no wait: nothing is read.
func (n *Node) WaitWorkerAge(ctx context.Context, pid int, age time.Duration) error {
	if age <= 0 {
		return nil
	}
	return Poll(ctx, age+10*time.Second, 200*time.Millisecond, func() (bool, error) {
		procs, err := n.Procs(ctx)
		if err != nil {
			return false, nil
		}
		p, ok := procs.Find(pid)
		return ok && p.Uptime >= age, nil
	})
}

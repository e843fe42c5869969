package node

import (
	"context"
	"time"
)

// LoopRate is the worker's poll loops per second: show activity's loop
// count read twice, window apart (a fixed window measured, not a wait).
func (n *Node) LoopRate(ctx context.Context, pid int, window time.Duration) (int64, error) {
	sample := func() (int64, time.Time, error) {
		l, err := n.Loops(ctx, pid)
		return l, time.Now(), err
	}
	l0, t0, err := sample()
	if err != nil {
		return 0, err
	}
	time.Sleep(window)
	l1, t1, err := sample()
	if err != nil {
		return 0, err
	}
	return int64(float64(l1-l0) / t1.Sub(t0).Seconds()), nil
}

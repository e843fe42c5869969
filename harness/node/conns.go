package node

import (
	"context"
	"sync"
	"time"

	"github.com/harp-project/harp/harness/cliout"
)

// SampleConns reads the frontend's row of show stat, then show info,
// every interval until stop is called, which returns the peaks. A read
// that fails is skipped.
func (n *Node) SampleConns(ctx context.Context, pid int, frontend string, interval time.Duration) (stop func() cliout.ConnPeaks) {
	var mu sync.Mutex
	var pk cliout.ConnPeaks
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tk := time.NewTicker(interval)
		defer tk.Stop()
		for {
			select {
			case <-sctx.Done():
				return
			case <-tk.C:
			}
			if rows, err := n.Stat(sctx, pid); err == nil {
				if fe, ok := cliout.FindStat(rows, frontend, "FRONTEND"); ok {
					mu.Lock()
					pk.AddFrontend(fe)
					mu.Unlock()
				}
			}
			if info, err := n.Info(sctx, pid); err == nil {
				mu.Lock()
				pk.AddProcess(info)
				mu.Unlock()
			}
		}
	}()
	return func() cliout.ConnPeaks {
		cancel()
		<-done
		mu.Lock()
		defer mu.Unlock()
		return pk
	}
}

// WaitConns polls show info every interval until the process holds at
// most atMost connections (CurrConns); a failed read counts as not yet.
// cur is the last count read.
func (n *Node) WaitConns(ctx context.Context, pid int, atMost int64, timeout, interval time.Duration) (cur int64, err error) {
	err = Poll(ctx, timeout, interval, func() (bool, error) {
		info, err := n.Info(ctx, pid)
		if err != nil {
			return false, nil
		}
		cur = info.Int("CurrConns")
		return cur <= atMost, nil
	})
	return cur, err
}

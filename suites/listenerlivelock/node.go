package listenerlivelock

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/harp-project/harp/harness/core/cliout"
	"github.com/harp-project/harp/harness/live/cpus"
	"github.com/harp-project/harp/harness/live/load"
	"github.com/harp-project/harp/harness/live/node"
	"github.com/harp-project/harp/suites/listenerlivelock/judge"
)

// What this suite reads and sets on its node, and how it attacks it: the
// suite's own, kept here (#43: code one suite needs lives with it).

// attacked is what an attack on a node's frontend saw (attackSampled).
type attacked struct {
	Ran   bool // the attack started
	Peaks judge.ConnPeaks
	cliout.Watchdog
	Load load.Result
}

// attackSampled sends o's load (load.Attack) from this process pinned to
// cs (cpus.Pin: the node runs on other CPUs), samples the frontend's
// sessions and the process's connections every interval meanwhile
// (sampleConns), and reads the watchdog's lines the node's output got
// since it began: what the output held before is not this attack's. err
// is the first step that failed; what was seen until then is kept.
func attackSampled(ctx context.Context, n *node.Node, pid int, frontend string, interval time.Duration, cs []int, o load.Options) (a attacked, err error) {
	before, err := n.Logs(ctx)
	if err != nil {
		return a, err
	}
	restore, err := cpus.Pin(cs)
	if err != nil {
		return a, err
	}
	stop := sampleConns(ctx, n, pid, frontend, interval)
	a.Load, err = load.Attack(ctx, o)
	a.Peaks, a.Ran = stop(), true
	restore()
	if err != nil {
		return a, err
	}
	fresh, err := n.LogsAfter(ctx, before)
	if err != nil {
		return a, err
	}
	a.Watchdog = cliout.ParseWatchdog(fresh)
	return a, nil
}

// sampleConns reads the frontend's row of show stat, then show info,
// every interval until stop is called, which returns the peaks. A read
// that fails is skipped.
func sampleConns(ctx context.Context, n *node.Node, pid int, frontend string, interval time.Duration) (stop func() judge.ConnPeaks) {
	var mu sync.Mutex
	var pk judge.ConnPeaks
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
	return func() judge.ConnPeaks {
		cancel()
		<-done
		mu.Lock()
		defer mu.Unlock()
		return pk
	}
}

// waitConns polls show info every interval until the process holds at
// most atMost connections (CurrConns); a failed read counts as not yet.
// cur is the last count read.
func waitConns(ctx context.Context, n *node.Node, pid int, atMost int64, timeout, interval time.Duration) (cur int64, err error) {
	err = node.Poll(ctx, timeout, interval, func() (bool, error) {
		info, err := n.Info(ctx, pid)
		if err != nil {
			return false, nil
		}
		cur = info.Int("CurrConns")
		return cur <= atMost, nil
	})
	return cur, err
}

// setMaxconn sets a frontend's maxconn (`set maxconn frontend`), then the
// process's (`set maxconn global`) when global is above 0.
func setMaxconn(ctx context.Context, n *node.Node, pid int, frontend string, max, global int) error {
	if err := n.Silent(ctx, pid, fmt.Sprintf("set maxconn frontend %s %d", frontend, max)); err != nil {
		return err
	}
	if global > 0 {
		return n.Silent(ctx, pid, fmt.Sprintf("set maxconn global %d", global))
	}
	return nil
}

// workerLayout reads show info, show stat and show threads from a worker:
// its version, threads, thread groups and the frontend's listeners.
func workerLayout(ctx context.Context, n *node.Node, pid int, frontend string) (l judge.WorkerLayout, err error) {
	info, err := n.Info(ctx, pid)
	if err != nil {
		return l, err
	}
	rows, err := n.Stat(ctx, pid)
	if err != nil {
		return l, err
	}
	threads, err := n.Query(ctx, pid, "show threads")
	if err != nil {
		return l, err
	}
	return judge.WorkerLayout{Version: info["Version"], Threads: info.Int("Nbthread"), Groups: cliout.ThreadGroups(threads),
		Listeners: cliout.Listeners(rows, frontend)}, nil
}

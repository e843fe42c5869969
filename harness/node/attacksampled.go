package node

import (
	"context"
	"time"

	"github.com/harp-project/harp/harness/cliout"
	"github.com/harp-project/harp/harness/cpus"
	"github.com/harp-project/harp/harness/load"
)

// Attacked is what an attack on a node's frontend saw (AttackSampled).
type Attacked struct {
	Ran   bool // the attack started
	Peaks cliout.ConnPeaks
	cliout.Watchdog
	Load load.Result
}

// AttackSampled sends o's load (load.Attack) from this process pinned to
// cs (cpus.Pin: the node runs on other CPUs), samples the frontend's
// sessions and the process's connections every interval meanwhile
// (SampleConns), and reads the watchdog's lines the node's output got
// since it began (WatchdogAfter): what the output held before is not
// this attack's. err is the first step that failed; what was seen until
// then is kept.
func (n *Node) AttackSampled(ctx context.Context, pid int, frontend string, interval time.Duration, cs []int, o load.Options) (a Attacked, err error) {
	before, err := n.Logs(ctx)
	if err != nil {
		return a, err
	}
	restore, err := cpus.Pin(cs)
	if err != nil {
		return a, err
	}
	stop := n.SampleConns(ctx, pid, frontend, interval)
	a.Load, err = load.Attack(ctx, o)
	a.Peaks, a.Ran = stop(), true
	restore()
	if err != nil {
		return a, err
	}
	a.Watchdog, err = n.WatchdogAfter(ctx, before)
	return a, err
}

package node

import (
	"context"
	"fmt"
	"time"

	"github.com/harp-project/harp/harness/cliout"
	"github.com/harp-project/harp/harness/obs"
)

// AfterFailedReload is what a reload with a config that cannot load left
// (FailReload), typed for a judge: a show proc harp could not read is
// unknown, never "not counted" or "old worker gone".
type AfterFailedReload struct {
	// FailedBefore is show proc's count of failed reloads just before it.
	FailedBefore int
	Old          int              // the worker that served before it
	Master       obs.Of[obs.Exit] // the master gone, or running
	// Procs is show proc at the moment it counted one more failed reload,
	// or at the end of the wait.
	Procs obs.Of[cliout.AfterFailure]
	// OldGone is the worker from before seen gone: show proc no longer
	// lists it.
	OldGone obs.Optional[obs.Exit]
	// Demoted: show proc lists no current worker, and the one from before,
	// which keeps serving, among the old workers (as 3.1 and later do
	// after a failed reload).
	Demoted bool
}

// FailReload reads show proc's count of failed reloads, reloads the node
// with cfg, a config that cannot load, and watches show proc until it
// counts one more or timeout passes (FailingReload), then reads what it
// says of old, the worker that served before. err is harp failing to
// read the count or to ask for the reload; only Master is read then, and
// when the master is gone.
func (n *Node) FailReload(ctx context.Context, cfg string, old int, timeout time.Duration) (AfterFailedReload, error) {
	before, err := n.Procs(ctx)
	if err != nil {
		return AfterFailedReload{Old: old}, err
	}
	failedBefore := before.Master.Failed
	procs, master, err := n.FailingReload(ctx, cfg, failedBefore, timeout)
	if err != nil || obs.Gone(master) {
		return AfterFailedReload{FailedBefore: failedBefore, Old: old, Master: master}, err
	}
	return afterFailedReload(procs, master, failedBefore, old), nil
}

// afterFailedReload reads show proc after a failed reload (procs.
// AfterFailure), given the master's failed count before and the worker
// from before.
func afterFailedReload(procs obs.Of[cliout.Procs], master obs.Of[obs.Exit], failedBefore, old int) AfterFailedReload {
	r := AfterFailedReload{FailedBefore: failedBefore, Old: old, Master: master, Procs: obs.Failure[cliout.AfterFailure]("%s", procs.Unknown())}
	p, ok := procs.Get()
	if !ok {
		return r
	}
	a := p.AfterFailure(failedBefore, old)
	_, current := p.Current()
	r.Procs, r.Demoted = obs.Value(a), !current && a.OldListed
	if !a.OldListed {
		r.OldGone = obs.Opt(obs.Value(obs.Exit{Process: fmt.Sprintf("old worker %d", old)}))
	}
	return r
}

// Notes are what the failed reload showed besides its facts, for a
// trial's notes: the worker that keeps serving listed among the old ones.
func (r AfterFailedReload) Notes() []string {
	if !r.Demoted {
		return nil
	}
	return []string{fmt.Sprintf("show proc lists the worker that keeps serving, %d, among the old workers (as 3.1 and later do after a failed reload)", r.Old)}
}

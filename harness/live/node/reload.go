package node

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"time"

	"github.com/harp-project/harp/harness/core/obs"
	"github.com/harp-project/harp/harness/live/cli"
)

// Reload is what was observed around one SIGUSR2.
type Reload struct {
	OldPID    int           `json:"old_pid"`
	NewPID    int           `json:"new_pid"`
	NewUp     time.Duration `json:"new_up_ns"`   // signal to new worker listed as current
	OldExited bool          `json:"old_exited"`  // old worker gone from `show proc`
	OldGone   time.Duration `json:"old_gone_ns"` // signal to old worker gone
	// Sent is when the signal (or the master CLI command) had surely
	// reached the master: its call had returned.
	Sent time.Time `json:"sent_at"`
}

// ReloadFailed is a reload HAProxy did not carry out: the master exited
// during it, or `show proc` kept answering and never listed a new worker.
// Harp's own failures (show proc unreadable, the signal not sent) are
// other errors: a caller tells them apart with errors.As.
type ReloadFailed struct {
	How     How
	Exit    *obs.Exit     // the master exited during the reload
	Within  time.Duration // how long show proc was watched
	Current int           // the current worker show proc listed last (0: none)
}

func (e *ReloadFailed) Error() string {
	if e.Exit != nil {
		return fmt.Sprintf("the %s during the reload (%s)", e.Exit, e.How)
	}
	return fmt.Sprintf("no new worker after %s: show proc answered for %s and listed worker %d as current throughout", e.How, e.Within, e.Current)
}

// How a reload is asked for.
type How string

const (
	BySignal    How = "SIGUSR2"           // the signal to the master
	ByMasterCLI How = "master CLI reload" // the master CLI's `reload` command
)

// Reload sends SIGUSR2 to the master; see ReloadBy.
func (n *Node) Reload(ctx context.Context, timeout time.Duration) (Reload, error) {
	return n.ReloadBy(ctx, BySignal, timeout)
}

// ReloadBy asks the master to reload, waits until it lists a new current
// worker, then until the old worker has left `show proc` or the deadline
// passed. Both are observed on the master CLI.
func (n *Node) ReloadBy(ctx context.Context, how How, timeout time.Duration) (Reload, error) {
	var r Reload
	old, err := n.CurrentWorker(ctx)
	if err != nil {
		return r, fmt.Errorf("before reload: %w", err)
	}
	r.OldPID = old
	t0 := time.Now()
	switch how {
	case BySignal:
		if err := n.Signal(ctx, syscall.SIGUSR2); err != nil {
			return r, fmt.Errorf("sending SIGUSR2: %w", err)
		}
	case ByMasterCLI:
		// The master re-executes and may close the connection before it
		// answers: the new worker in `show proc` is the answer that counts.
		// A reload HAProxy never got is not one it refused.
		// (The exchange itself resends a command that never got there.)
		if _, err := n.Master(ctx, "reload"); errors.Is(err, cli.ErrNotSent) {
			return r, fmt.Errorf("the master CLI's reload could not be sent: %w", err)
		}
	default:
		return r, fmt.Errorf("unknown way to reload: %q", how)
	}
	r.Sent = time.Now()
	var lastErr error
	lastCurrent := 0
	err = Poll(ctx, timeout, 50*time.Millisecond, func() (bool, error) {
		if e := n.MasterExit(ctx); e.State == obs.Seen && e.Value.Process != "" {
			return false, &ReloadFailed{How: how, Exit: &e.Value}
		}
		procs, err := n.Procs(ctx)
		if lastErr = err; err != nil {
			return false, nil // the master is busy re-executing
		}
		w, ok := procs.Current()
		if ok && w.PID != old {
			r.NewPID = w.PID
			return true, nil
		}
		lastCurrent = w.PID
		return false, nil
	})
	var failed *ReloadFailed
	switch {
	case errors.As(err, &failed):
		return r, err
	case errors.Is(err, ErrDeadline) && lastErr == nil:
		// show proc answered to the end and listed no new worker: the
		// master did not reload.
		return r, &ReloadFailed{How: how, Within: timeout, Current: lastCurrent}
	case errors.Is(err, ErrDeadline):
		return r, fmt.Errorf("no new worker seen after %s: show proc kept failing (%v)", how, lastErr)
	case err != nil:
		return r, fmt.Errorf("no new worker after %s: %w", how, err)
	}
	r.NewUp = time.Since(t0)
	err = Poll(ctx, timeout, 50*time.Millisecond, func() (bool, error) {
		procs, err := n.Procs(ctx)
		if err != nil {
			return false, nil
		}
		_, present := procs.Find(old)
		return !present, nil
	})
	if err == nil {
		r.OldExited, r.OldGone = true, time.Since(t0)
	} else if !errors.Is(err, ErrDeadline) {
		return r, err
	}
	return r, nil
}

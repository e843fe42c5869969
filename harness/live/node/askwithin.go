package node

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/harp-project/harp/harness/live/cli"
)

// Asked is one runtime command asked within a bound: a CLI that does not
// answer in time is evidence, not a harness error.
type Asked struct {
	Took time.Duration
	// Answer is the answer trimmed; with Err, what came before the error,
	// as it came.
	Answer string
	Err    error // nil when answered
	// Ended: the caller's context ended before an answer, which then
	// says nothing of HAProxy.
	Ended bool
}

// NotSent says whether the command never reached the socket
// (cli.ErrNotSent): HAProxy never saw it.
func (a Asked) NotSent() bool { return errors.Is(a.Err, cli.ErrNotSent) }

// AskWithin runs cmd on a worker (as Query) and waits for its answer at
// most bound, timing it.
func (n *Node) AskWithin(ctx context.Context, pid int, cmd string, bound time.Duration) Asked {
	cctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	t0 := time.Now()
	out, err := n.Query(cctx, pid, cmd)
	a := Asked{Took: time.Since(t0), Answer: out, Err: err}
	if err == nil {
		a.Answer = strings.TrimSpace(out)
	} else {
		a.Ended = ctx.Err() != nil
	}
	return a
}

// MasterAnswers asks the master's CLI for `show proc` within bound: nil
// when it answered. It is the control for a worker's CLI that did not
// (another process on the same node and path).
func (n *Node) MasterAnswers(ctx context.Context, bound time.Duration) error {
	cctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	_, err := n.Procs(cctx)
	return err
}

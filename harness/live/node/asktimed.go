package node

import (
	"context"
	"time"

	"github.com/harp-project/harp/harness/core/clicall"
	"github.com/harp-project/harp/harness/core/obs"
)

// AskTimed runs cmd on a worker, waited for at most wait (AskWithin), and
// records it as a judge reads it (clicall.Call): a CLI that does not
// answer is evidence, not a harness error. A command not answered within
// bound gets its control: whether the master's CLI, another process on
// the same node and path, answers within bound (MasterAnswers); when it
// does not either and the worker gave no answer, the node, not the
// worker, is out of reach, which is unknown. A command that never reached
// the socket is unknown too: HAProxy never saw it.
func (n *Node) AskTimed(ctx context.Context, pid int, cmd string, bound, wait time.Duration) clicall.Call {
	a := n.AskWithin(ctx, pid, cmd, wait)
	c := clicall.Call{Command: cmd, Took: a.Took, Answer: a.Answer}
	switch {
	case a.Ended:
		c.Answer, c.Err = "", "the run ended"
	case a.NotSent():
		c.Err = clicall.NotSent + a.Err.Error()
		c.Control = obs.Opt(obs.Failure[bool]("%q %s", cmd, c.Err))
		return c
	case a.Err != nil:
		c.Err = a.Err.Error()
	}
	if c.Late(bound) {
		merr := n.MasterAnswers(ctx, bound)
		c.Control = obs.Opt(obs.Value(merr == nil))
		if merr != nil && c.Err != "" {
			c.Control = obs.Opt(obs.Failure[bool]("the master's CLI did not answer either (%s): the node, not the worker, is out of reach", merr))
		}
	}
	return c
}

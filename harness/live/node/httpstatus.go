package node

import (
	"context"
	"time"

	"github.com/harp-project/harp/harness/core/obs"
	"github.com/harp-project/harp/harness/live/load"
)

// HTTPStatus is worker pid's HTTP answer on addr (load.Status within
// bound). No answer is the worker's own (0) only when its CLI answers
// through the same published ports just after (the control); otherwise
// harp could not reach it, and nothing is known.
func (n *Node) HTTPStatus(ctx context.Context, pid int, addr string, bound time.Duration) obs.Of[int] {
	code := load.Status(ctx, addr, bound)
	if code.Known() {
		return code
	}
	if _, err := n.Worker(ctx, pid, "show info"); err != nil {
		return obs.Failure[int]("%s, and worker %d's CLI did not answer either (%v)", code.Unknown(), pid, err)
	}
	return obs.Value(0)
}

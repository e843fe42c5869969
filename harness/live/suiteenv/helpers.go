package suiteenv

import (
	"context"
	"fmt"
	"strings"

	"github.com/harp-project/harp/harness/core/verdict"
	"github.com/harp-project/harp/harness/live/node"
)

// List is a suite's variants for its steps: each one's text, joined by sep.
func List[T any](all []T, text func(T) string, sep string) string {
	s := make([]string, 0, len(all))
	for _, v := range all {
		s = append(s, text(v))
	}
	return strings.Join(s, sep)
}

// LanesText says in the steps how trials spread over n nodes side by side
// (RunTrialsOn); noun is what one trial is called ("reload").
func LanesText(n int, noun string) string {
	if n == 1 {
		return "one node"
	}
	return fmt.Sprintf("up to %d nodes side by side, the %ss spread over them (%s i on node (i-1) mod %d, each node's %ss one after another)", n, noun, noun, n, noun)
}

// StartServing is StartNode, and the address where the node's port
// (published by o.Ports) is reached. n is nil when either failed; out is
// then the run's outcome.
func (env *Env) StartServing(ctx context.Context, o node.Options, threads int, port string) (n *node.Node, addr string, out verdict.Outcome) {
	n, unmet, err := env.StartNode(ctx, o, threads)
	if n == nil {
		return nil, "", verdict.Outcome{Unmet: unmet, Err: err}
	}
	if addr, err = n.Addr(ctx, port); err != nil {
		return nil, "", verdict.Outcome{Err: err}
	}
	return n, addr, verdict.Outcome{}
}

// StopIfGone is a trial's answer to the trial loop: Stop when the node's
// master is seen gone after a trial that ended without error (later
// trials would say nothing new), else err.
func StopIfGone(ctx context.Context, n *node.Node, err error) error {
	if running, _, rerr := n.Running(ctx); err == nil && rerr == nil && !running {
		return Stop
	}
	return err
}

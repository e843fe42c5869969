package suites

import (
	"context"
	"fmt"

	"github.com/harp-project/harp/harness/cliout"
	"github.com/harp-project/harp/harness/node"
	"github.com/harp-project/harp/harness/scenario"
	"github.com/harp-project/harp/harness/verdict"
)

// startSingle records the config, starts the one node a suite's setup asks
// for, and checks it runs the threads the setup needs. When it returns
// ok=false, out is the outcome to return and nothing is left running; else
// the caller stops the node.
func startSingle(ctx context.Context, env *scenario.Env, o node.Options, cfgErr error, threads int64) (n *node.Node, out verdict.Outcome, ok bool) {
	env.Config = o.Config
	if cfgErr != nil {
		return nil, verdict.Outcome{Err: cfgErr}, false
	}
	o.Image, o.RunID = env.Image, env.RunID
	n, err := env.Start(ctx, o)
	if err != nil {
		return nil, verdict.Outcome{Err: err}, false
	}
	if unmet, err := checkThreads(ctx, n, threads); err != nil || unmet != "" {
		n.Stop(context.WithoutCancel(ctx))
		return nil, verdict.Outcome{Unmet: unmet, Err: err}, false
	}
	return n, verdict.Outcome{}, true
}

// checkThreads verifies the node runs the threads a suite's setup asks for.
func checkThreads(ctx context.Context, n *node.Node, want int64) (unmet string, err error) {
	pid, err := n.CurrentWorker(ctx)
	if err != nil {
		return "", err
	}
	raw, err := n.Worker(ctx, pid, "show info")
	if err != nil {
		return "", fmt.Errorf("show info: %w", err)
	}
	info, err := cliout.ParseInfo(raw)
	if err != nil {
		return "", err
	}
	if info.Int("Nbthread") != want {
		return fmt.Sprintf("the setup needs nbthread %d, the worker runs %s threads", want, info["Nbthread"]), nil
	}
	return "", nil
}

package suites

import (
	"context"
	"fmt"

	"github.com/harp-project/harp/harness/cliout"
	"github.com/harp-project/harp/harness/node"
)

// checkThreads verifies the node runs the threads a suite's setup asks for.
func checkThreads(ctx context.Context, n *node.Node, want int64) string {
	pid, err := n.CurrentWorker(ctx)
	if err != nil {
		return err.Error()
	}
	raw, err := n.Worker(ctx, pid, "show info")
	if err != nil {
		return "show info: " + err.Error()
	}
	info, err := cliout.ParseInfo(raw)
	if err != nil {
		return err.Error()
	}
	if info.Int("Nbthread") != want {
		return fmt.Sprintf("the setup needs nbthread %d, the worker runs %s threads", want, info["Nbthread"])
	}
	return ""
}

package node

import (
	"context"

	"github.com/harp-project/harp/harness/cliout"
)

// WorkerLayout reads show info, show stat and show threads from a worker:
// its version, threads, thread groups and the frontend's listeners.
func (n *Node) WorkerLayout(ctx context.Context, pid int, frontend string) (l cliout.WorkerLayout, err error) {
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
	return cliout.WorkerLayout{Version: info["Version"], Threads: info.Int("Nbthread"), Groups: cliout.ThreadGroups(threads),
		Listeners: cliout.Listeners(rows, frontend)}, nil
}

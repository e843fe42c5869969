package node

import (
	"context"

	"github.com/harp-project/harp/harness/cliout"
)

// WatchdogAfter is what the node printed after before (as LogsAfter) says
// of stalls and ends: the watchdog's warnings, panics, failed worker exits
// and the master's exit.
func (n *Node) WatchdogAfter(ctx context.Context, before string) (cliout.Watchdog, error) {
	fresh, err := n.LogsAfter(ctx, before)
	if err != nil {
		return cliout.Watchdog{}, err
	}
	return cliout.ParseWatchdog(fresh), nil
}

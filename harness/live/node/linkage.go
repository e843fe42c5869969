package node

import (
	"context"
	"fmt"
	"time"
)

// LinkAge is the current worker's uptime (show proc) and how long ago its
// link to peer in section last completed a handshake (show peers'
// last_hdshk): both in whole seconds, rounded down by HAProxy. The error
// names the reading that failed, or a link that never shook hands.
func (n *Node) LinkAge(ctx context.Context, section, peer string) (uptime, hdshk time.Duration, err error) {
	procs, err := n.Procs(ctx)
	w, ok := procs.Current()
	if err != nil || !ok {
		return 0, 0, fmt.Errorf("the current worker's uptime could not be read (show proc: %v)", err)
	}
	sec, err := n.Section(ctx, StatsSocket, section)
	if err != nil {
		return 0, 0, fmt.Errorf("show peers could not be read: %w", err)
	}
	p, _ := sec.Peer(peer)
	age, never, ok := p.Delay("last_hdshk")
	if !ok || never {
		return 0, 0, fmt.Errorf("show peers gives no handshake with %s (last_hdshk=%q)", peer, p.LastHdshk)
	}
	return w.Uptime, age, nil
}

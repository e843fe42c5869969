package remotepeer

import (
	"context"
	"fmt"
	"time"

	"github.com/harp-project/harp/harness/live/node"
	"github.com/harp-project/harp/harness/live/peers"
)

// KeepUpOn plays the remote peer remote of section on n, whose local peer
// local listens on the node's published port (KeepUp, with the default
// options), and waits up to timeout for show peers to show it established.
// unmet says why it is not up ("" when it is): the port could not be read,
// or it was never established, a precondition of whatever needs it up.
// stop ends it (a no-op when the port could not be read).
func KeepUpOn(ctx context.Context, n *node.Node, port, section, local, remote string, timeout time.Duration) (stop func(), unmet string) {
	addr, err := n.Addr(ctx, port)
	if err != nil {
		return func() {}, err.Error()
	}
	p := &Probe{Node: n, Addr: addr, Section: section, Local: local, Remote: remote}
	stop = p.KeepUp(ctx, peers.DefaultOptions)
	if _, err := p.Established(ctx, timeout); err != nil {
		return stop, fmt.Sprintf("the remote peer played by harp was never established (%s)", timeout)
	}
	return stop, ""
}

package remotepeer

import (
	"context"
	"time"

	"github.com/harp-project/harp/harness/node"
	"github.com/harp-project/harp/harness/peers"
)

// KeepUpOn plays the remote peer remote of section on n, whose local peer
// local listens on the node's published port (KeepUp, with the default
// options), and waits up to timeout for show peers to show it established.
// stop ends it (a no-op when the port could not be read: err says why).
func KeepUpOn(ctx context.Context, n *node.Node, port, section, local, remote string, timeout time.Duration) (stop func(), established bool, err error) {
	addr, err := n.Addr(ctx, port)
	if err != nil {
		return func() {}, false, err
	}
	p := &Probe{Node: n, Addr: addr, Section: section, Local: local, Remote: remote}
	stop = p.KeepUp(ctx, peers.DefaultOptions)
	_, err = p.Established(ctx, timeout)
	return stop, err == nil, nil
}

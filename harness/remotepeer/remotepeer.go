// Package remotepeer lets harp play a remote peer of a node's peers
// section with its own peers client, while reading what the node says of
// that peer in `show peers`: the two views a suite about peer sessions
// compares.
package remotepeer

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/harp-project/harp/harness/cliout"
	"github.com/harp-project/harp/harness/node"
	"github.com/harp-project/harp/harness/peers"
)

// Probe is harp as the peer Remote of Section, connecting to the node's
// local peer Local at Addr.
type Probe struct {
	Node                   *node.Node
	Addr                   string // the local peer's address, as reached from here
	Section, Local, Remote string
}

// Dial completes a handshake as the remote peer (the status is HAProxy's
// answer, peers.StatusSuccess when accepted).
func (p *Probe) Dial(ctx context.Context, o peers.Options) (*peers.Conn, int, error) {
	return peers.Dial(ctx, p.Addr, peers.Hello{Remote: p.Local, Local: p.Remote, PID: os.Getpid()}, o)
}

// Kill tells HAProxy to end the remote peer's current session (`shutdown
// session` on the stream whose source show peers gives for it).
func (p *Probe) Kill(ctx context.Context) error {
	r, err := p.State(ctx)
	if err != nil {
		return err
	}
	src := r.Fields["src"]
	if src == "" {
		return fmt.Errorf("show peers gives no source address for %s's session", p.Remote)
	}
	sess, err := p.Node.Query(ctx, node.Current, "show sess")
	if err != nil {
		return err
	}
	for _, line := range strings.Split(sess, "\n") {
		if ptr, rest, ok := strings.Cut(line, ": "); ok && strings.Contains(" "+rest+" ", " src="+src+" ") {
			return p.Node.Silent(ctx, node.Current, "shutdown session "+ptr)
		}
	}
	return fmt.Errorf("show sess lists no stream from %s", src)
}

// State is the remote peer as the node's current worker shows it.
func (p *Probe) State(ctx context.Context) (cliout.Peer, error) {
	s, err := p.Node.Section(ctx, node.Current, p.Section)
	if err != nil {
		return cliout.Peer{}, err
	}
	r, ok := s.Peer(p.Remote)
	if !ok {
		return r, fmt.Errorf("show peers lists no peer %q in section %s", p.Remote, p.Section)
	}
	return r, nil
}

// WaitResync waits until the section's initial resync is finished, so that
// HAProxy will not ask harp's peer to teach it; else it says why not.
func (p *Probe) WaitResync(ctx context.Context, timeout time.Duration) string {
	_, unmet, err := p.Node.WaitResync(ctx, node.Current, timeout, p.Section)
	if err != nil {
		return err.Error()
	}
	return unmet
}

// Established waits until show peers shows the remote peer established.
func (p *Probe) Established(ctx context.Context, timeout time.Duration) (cliout.Peer, error) {
	var r cliout.Peer
	err := node.Poll(ctx, timeout, 50*time.Millisecond, func() (bool, error) {
		var err error
		r, err = p.State(ctx)
		return err == nil && r.Established(), nil
	})
	return r, err
}

// Settled waits until no session of the remote peer is up (neither harp's
// nor HAProxy's own attempt to connect to the remote peer's address) and
// HAProxy's next attempt is at least quiet away (its `reconnect` timer;
// show peers rounds it to seconds): a handshake made then collides with
// nothing, and once it is established HAProxy stops attempting.
func (p *Probe) Settled(ctx context.Context, quiet, timeout time.Duration) error {
	return node.Poll(ctx, timeout, 100*time.Millisecond, func() (bool, error) {
		r, err := p.State(ctx)
		if err != nil || r.Session {
			return false, nil
		}
		d, never, ok := r.Delay("reconnect")
		return ok && (never || d >= quiet), nil
	})
}

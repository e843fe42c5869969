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
// nor HAProxy's own attempt to connect to the remote peer's address), no
// stream of an earlier one is left (HAProxy releases a session's applet
// after show peers stopped showing it, and a release clears the alive
// flag, the next session's too on a build with #3519) and HAProxy's next
// attempt is at least quiet away (its `reconnect` timer, which show peers
// rounds down to seconds; an expired one never is): a handshake made then
// collides with nothing and is not undone by an old release, and once it
// is established HAProxy stops attempting. With quiet 0 a timer shown as
// 0s is enough: the attempt may then be a moment away, and a handshake
// that collides with it anyway must be told by the caller (coll in show
// peers).
//
// An attempt of HAProxy's own that a handshake superseded is not shut
// down: it goes on retrying until its connects fail (3 s against a port
// where nothing listens), and `shutdown session` does not end it sooner.
// With keepAttempts those may remain; they are returned, for the caller
// to watch (Streams) and discard what their release may have undone.
func (p *Probe) Settled(ctx context.Context, quiet, timeout time.Duration, keepAttempts bool) (attempts []string, err error) {
	err = node.Poll(ctx, timeout, 50*time.Millisecond, func() (bool, error) {
		r, err := p.State(ctx)
		if err != nil || r.Session {
			return false, nil
		}
		d, never, ok := r.Delay("reconnect")
		if !ok || (!never && (r.Fields["reconnect"] == "<PAST>" || d < quiet)) {
			return false, nil
		}
		in, out, err := p.Streams(ctx)
		attempts = out
		return err == nil && len(in) == 0 && (keepAttempts || len(out) == 0), nil
	})
	return attempts, err
}

// Streams lists the peers streams show sess gives, by pointer: in, those
// that came in over TCP (harp's sessions, released or not); out, those
// without a frontend connection (HAProxy's own attempts to connect). The
// CLI's streams are neither. The section has no other proxy.
func (p *Probe) Streams(ctx context.Context) (in, out []string, err error) {
	sess, err := p.Node.Query(ctx, node.Current, "show sess")
	if err != nil {
		return nil, nil, err
	}
	in, out = streams(sess)
	return in, out, nil
}

func streams(sess string) (in, out []string) {
	for _, line := range strings.Split(sess, "\n") {
		ptr, rest, ok := strings.Cut(line, ": ")
		if !ok || !strings.HasPrefix(ptr, "0x") {
			continue
		}
		f := " " + rest + " "
		switch {
		case strings.Contains(f, " fe=GLOBAL "):
		case strings.Contains(f, " proto=tcpv4 "), strings.Contains(f, " proto=tcpv6 "):
			in = append(in, ptr)
		case strings.Contains(f, " proto=? "):
			out = append(out, ptr)
		}
	}
	return in, out
}

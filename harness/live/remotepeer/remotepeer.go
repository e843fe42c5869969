// Package remotepeer lets harp play a remote peer of a node's peers
// section with its own peers client, while reading what the node says of
// that peer in `show peers`: the two views a suite about peer sessions
// compares.
package remotepeer

import (
	"context"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/harp-project/harp/harness/core/cliout"
	"github.com/harp-project/harp/harness/live/node"
	"github.com/harp-project/harp/harness/live/peers"
)

// Probe is harp as the peer Remote of Section, connecting to the node's
// local peer Local at Addr.
type Probe struct {
	Node                   *node.Node
	Addr                   string // the local peer's address, as reached from here
	Section, Local, Remote string
	// OtherSections: the node has other peers sections with remote peers
	// of their own, whose attempts to connect show sess lists like this
	// one's (nothing there names the section): Settled then reads this
	// peer's own state alone (an attempt of its own has an applet).
	OtherSections bool
}

// Dial completes a handshake as the remote peer (the status is HAProxy's
// answer, peers.StatusSuccess when accepted).
func (p *Probe) Dial(ctx context.Context, o peers.Options) (*peers.Conn, int, error) {
	return peers.Dial(ctx, p.Addr, peers.Hello{Remote: p.Local, Local: p.Remote, PID: os.Getpid()}, o)
}

// Accepted dials, every 200 ms for at most timeout, until HAProxy accepts
// the handshake (status 200).
func (p *Probe) Accepted(ctx context.Context, o peers.Options, timeout time.Duration) (*peers.Conn, error) {
	var c *peers.Conn
	err := node.Poll(ctx, timeout, 200*time.Millisecond, func() (bool, error) {
		conn, status, err := p.Dial(ctx, o)
		if err == nil && status == peers.StatusSuccess && conn != nil {
			c = conn
			return true, nil
		}
		return false, nil
	})
	return c, err
}

// KeepUp keeps a session of the remote peer up until stop: it dials again
// whenever the last one ended (a reload's old worker leaves, the new one
// must find the peer up too), 200 ms after a dial that failed.
func (p *Probe) KeepUp(ctx context.Context, o peers.Options) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			c, _, err := p.Dial(ctx, o)
			if err != nil || c == nil {
				select {
				case <-ctx.Done():
				case <-time.After(200 * time.Millisecond):
				}
				continue
			}
			select {
			case <-ctx.Done():
				c.Close()
			case <-c.Closed():
			}
		}
	}()
	return func() { cancel(); <-done }
}

// Session completes a handshake as the remote peer and runs run on the
// session (and its TCP connection, to half-close it), which must be harp's
// alone: it starts once no session of the remote peer is up (Settled,
// quiet 0, within 15 s), and one that collided with HAProxy's own attempt
// to connect anyway (coll up in show peers across it) is run again, at
// most tries times: a superseded attempt's release clears the alive flag
// (#3519), which would end the session for a reason not run's. The
// session is closed when run returns.
func (p *Probe) Session(ctx context.Context, o peers.Options, tries int, run func(*peers.Conn, *net.TCPConn) (string, error)) (string, error) {
	var why string
	for range tries {
		answer, coll, err := p.session(ctx, o, run)
		if err != nil || coll == "" {
			return answer, err
		}
		why = coll
	}
	return "", fmt.Errorf("every try collided with HAProxy's own attempt to connect to %s: %s", p.Remote, why)
}

func (p *Probe) session(ctx context.Context, o peers.Options, run func(*peers.Conn, *net.TCPConn) (string, error)) (answer, collided string, err error) {
	if _, err := p.Settled(ctx, 0, 15*time.Second, false); err != nil {
		return "", "", fmt.Errorf("HAProxy's own attempt to connect to %s never ended: %w", p.Remote, err)
	}
	before, err := p.State(ctx)
	if err != nil {
		return "", "", err
	}
	c0, err := net.DialTimeout("tcp", p.Addr, 5*time.Second)
	if err != nil {
		return "", "", fmt.Errorf("connecting: %w", err)
	}
	conn := c0.(*net.TCPConn)
	defer conn.Close()
	pc, status, err := peers.Handshake(ctx, conn, peers.Hello{Remote: p.Local, Local: p.Remote, PID: os.Getpid()}, o)
	if err != nil {
		return "", "", err
	}
	if status != peers.StatusSuccess {
		return "", "", fmt.Errorf("the handshake as %s was answered %d", p.Remote, status)
	}
	defer pc.Close()
	if answer, err = run(pc, conn); err != nil {
		return answer, "", err
	}
	after, err := p.State(ctx)
	if err != nil {
		// Unknown, never "no collision"; a node the session killed is
		// the caller's to judge.
		return answer, "", fmt.Errorf("show peers after the session: %w", err)
	}
	if after.Int("coll") != before.Int("coll") {
		return answer, fmt.Sprintf("coll %d -> %d", before.Int("coll"), after.Int("coll")), nil
	}
	return answer, "", nil
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
	ss, err := p.Node.Sessions(ctx, node.Current)
	if err != nil {
		return err
	}
	for _, s := range ss {
		if s.Has("src=" + src) {
			return p.Node.Silent(ctx, node.Current, "shutdown session "+s.Ptr)
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
		return err == nil && len(in) == 0 && (keepAttempts || p.OtherSections || len(out) == 0), nil
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
	for _, s := range cliout.ParseSess(sess) {
		switch {
		case s.Has("fe=GLOBAL"):
		case s.Has("proto=tcpv4"), s.Has("proto=tcpv6"):
			in = append(in, s.Ptr)
		case s.Has("proto=?"):
			out = append(out, s.Ptr)
		}
	}
	return in, out
}

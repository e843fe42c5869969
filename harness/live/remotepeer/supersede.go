package remotepeer

import (
	"context"
	"fmt"
	"time"

	"github.com/harp-project/harp/harness/core/cliout"
	"github.com/harp-project/harp/harness/live/peers"
)

// Collided begins the unmet reason of a handshake that collided with a
// session of HAProxy's own (coll up in show peers).
const Collided = "collision with HAProxy's own session"

// Superseded is what Supersede made: harp's sessions of the remote peer
// and the state show peers gave once the watched one was the only one.
type Superseded struct {
	Conns     []*peers.Conn // every session dialled, the watched one last: the caller closes them
	Before    cliout.Peer   // the remote peer once the watched session was the only one
	Start     time.Time     // when the watched session became the only one
	Handshake time.Time     // of the session last dialled: its first heartbeat is due peers.DefaultOptions.Heartbeat later
	Attempts  []string      // HAProxy's own attempts to connect still retrying before the first dial (keepAttempts)
}

// Supersede makes a session of the remote peer and, with replace, a
// second one that supersedes it: HAProxy keeps the new session and must
// release the first (its socket closed by HAProxy) within release. It
// starts once Settled (within 15 s, quiet 0: a handshake may follow
// HAProxy's reconnect timer closely, and one that collides with HAProxy's
// own attempt anyway raises coll; waiting for a timer shown as 1s instead
// would often wait out that attempt, whose connects to a dead port are
// retried for 3 s). It checks that neither handshake collided with a
// session of HAProxy's own (unmet, beginning with Collided) and that the
// watched session is established.
func (p *Probe) Supersede(ctx context.Context, replace, keepAttempts bool, release time.Duration) (s Superseded, unmet string, err error) {
	if s.Attempts, err = p.Settled(ctx, 0, 15*time.Second, keepAttempts); err != nil {
		return s, "a session of the remote peer from before, or its stream, never ended", nil
	}
	r0, err := p.State(ctx)
	if err != nil {
		return s, "", err
	}
	coll := r0.Int("coll")
	dial := func(which string) (string, error) {
		c, status, err := p.Dial(ctx, peers.DefaultOptions)
		s.Handshake = time.Now()
		if err != nil {
			return "", err
		}
		if c != nil {
			s.Conns = append(s.Conns, c)
		}
		if status != peers.StatusSuccess {
			return fmt.Sprintf("%s handshake answered %d", which, status), nil
		}
		return "", nil
	}
	if unmet, err := dial("first"); err != nil || unmet != "" {
		return s, unmet, err
	}
	r1, err := p.Established(ctx, 5*time.Second)
	if err != nil {
		return s, "show peers never showed the first session established", nil
	}
	// The first handshake must not have replaced a session of HAProxy's own.
	if r1.Int("coll") != coll {
		return s, fmt.Sprintf("%s: the first handshake raised coll from %d to %d", Collided, coll, r1.Int("coll")), nil
	}
	if replace {
		if unmet, err := dial("replacement"); err != nil || unmet != "" {
			return s, unmet, err
		}
		if unmet := Released(s.Conns[0], release); unmet != "" {
			return s, unmet, nil
		}
	}
	s.Start = time.Now()
	if s.Before, err = p.State(ctx); err != nil {
		return s, "", err
	}
	if want := coll + map[bool]int64{false: 0, true: 1}[replace]; s.Before.Int("coll") != want {
		return s, fmt.Sprintf("%s: coll went from %d to %d, want %d", Collided, coll, s.Before.Int("coll"), want), nil
	}
	if !s.Before.Established() {
		return s, "show peers does not show the watched session established before the window", nil
	}
	return s, "", nil
}

// Released waits at most d until HAProxy has closed a superseded
// session's socket, else says why not.
func Released(first *peers.Conn, d time.Duration) string {
	if !first.WaitClosed(d) {
		return fmt.Sprintf("HAProxy did not release the superseded session within %s (its socket is still open)", d)
	}
	if byPeer, why := first.Ended(); !byPeer {
		return fmt.Sprintf("harp's client ended the superseded session itself: %v", why)
	}
	return ""
}

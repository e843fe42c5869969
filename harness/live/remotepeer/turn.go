package remotepeer

import (
	"context"
	"fmt"
	"time"

	"github.com/harp-project/harp/harness/core/cliout"
	"github.com/harp-project/harp/harness/core/obs"
	"github.com/harp-project/harp/harness/core/peerwire"
	"github.com/harp-project/harp/harness/live/peers"
)

// Turn is one check's turn on a Sender's kept session: crafted messages
// sent on it, then a correct update, and whether the node kept the
// session through them, all recorded in the check's obs.Record. A session
// that ended is the node's doing only when the node closed it while harp
// kept talking (Ended), and a drop by HAProxy's reconnect check after the
// correct update was applied is not the messages' (cliout.HeartbeatDrop): the
// rules of a suite that plays a remote peer sending messages a correct
// peer could.
type Turn struct {
	Conn *peers.Conn
	// Before is the remote peer as show peers gave it when the turn
	// began: its counters tell a drop by the reconnect check.
	Before obs.Of[cliout.Peer]
	s      *Sender
	r      *obs.Record
}

// Turn begins a check's turn on the kept session (Session: dialled again
// once the last one ended, made ready by ready, fresh then); nil when
// there is none, which makes r's check unmet (Session's error).
func (s *Sender) Turn(ctx context.Context, r *obs.Record, o peers.Options, accept, established time.Duration, ready func(*peers.Conn) error) (t *Turn, fresh bool) {
	conn, fresh, err := s.Session(ctx, o, accept, established, ready)
	if err != nil {
		r.Unmet = err.Error()
		return nil, false
	}
	return &Turn{Conn: conn, Before: obs.From(s.State(ctx)), s: s, r: r}, fresh
}

// Send writes crafted messages (what says which); false when the session
// ended, recorded as Ended.
func (t *Turn) Send(what string, ms ...peerwire.Message) bool {
	if err := t.Conn.Send(ms...); err != nil {
		Ended(t.r, t.Conn, fmt.Sprintf("during %s (%v)", what, err))
		return false
	}
	return true
}

// Kept records whether the node kept the session after the turn's
// messages; applied says that the node applied the correct update sent
// after them. A session still established holds; one the node dropped is
// a violation unless harp starved it (peers.Conn.Starved), or after the
// update was applied the reconnect check dropped it (cliout.HeartbeatDrop) or
// show peers could not tell whether it did (unknown, not "no"); one that
// ended is as Ended says.
func (t *Turn) Kept(ctx context.Context, applied bool) {
	closed := t.Conn.WaitClosed(0)
	p, err := t.s.State(ctx)
	b, known := t.Before.Get()
	switch {
	case !closed && err != nil:
		t.r.Unmet = "reading the node's show peers failed: " + err.Error()
	case !closed && p.Established():
	case t.Conn.Starved() != "":
		t.r.NotRead("the node dropped harp's session after the messages, but %s", t.Conn.Starved())
	case applied && (err != nil || !known):
		// Whether the reconnect check dropped it is unknown, not "no".
		t.r.NotRead("the node dropped harp's session after the messages; show peers before or after could not be read (%v; before: %s), so whether HAProxy's reconnect check did is unknown", err, t.Before.Unknown())
	case applied && cliout.HeartbeatDrop(b, p) != "":
		t.r.NotRead("the node dropped harp's session after the messages, but %s", cliout.HeartbeatDrop(b, p))
	case closed:
		Ended(t.r, t.Conn, "after the messages")
	default:
		t.r.Violated("the node no longer shows harp's session established")
	}
}

// Ended records in r a session of harp's with the node that ended (when
// says at what point): the node's doing, a violation, only when it closed
// or reset it; harp's own decoder giving up, or harp closing it, is harp's
// and decides nothing (unknown), and so does a close while harp was
// starved (peers.Conn.Starved).
func Ended(r *obs.Record, conn *peers.Conn, when string) {
	switch byPeer, why := conn.Ended(); {
	case !byPeer:
		r.NotRead("harp's session with the node ended on harp's side %s: %v", when, why)
	case conn.Starved() != "":
		r.NotRead("the node closed harp's session %s, but %s", when, conn.Starved())
	default:
		r.Violated("the node closed harp's session %s", when)
	}
}

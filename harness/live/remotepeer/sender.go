package remotepeer

import (
	"context"
	"fmt"
	"time"

	"github.com/harp-project/harp/harness/core/peerwire"
	"github.com/harp-project/harp/harness/live/node"
	"github.com/harp-project/harp/harness/live/peers"
)

// Sender keeps one established session of the remote peer across the
// trials that send it crafted messages, dialling again once the last one
// ended.
type Sender struct {
	*Probe
	conn *peers.Conn
}

// Session is the kept session while it is open (fresh false), else a new
// one (fresh true): dialled once HAProxy's own attempts to connect to the
// remote peer settled (Settled, quiet 0, within 15 s), accepted (status
// 200) within accept, shown established by show peers within established,
// then made ready by ready. One that collided with an attempt of
// HAProxy's anyway (coll up across it) is closed and dialled again, up to
// three times: the superseded attempt's release would clear its alive
// flag (#3519) and HAProxy's next reconnect check drop it, for no reason
// of the messages a trial sends. A session only half ready is closed, for
// the next call to dial again; the error says which step failed.
func (s *Sender) Session(ctx context.Context, o peers.Options, accept, established time.Duration, ready func(*peers.Conn) error) (c *peers.Conn, fresh bool, err error) {
	if s.conn != nil {
		if !s.conn.WaitClosed(0) {
			return s.conn, false, nil
		}
		s.conn = nil
	}
	for range 3 {
		var collided bool
		if c, collided, err = s.dial(ctx, o, accept, established); err != nil || !collided {
			break
		}
		c.Close()
		err = fmt.Errorf("every session harp dialled collided with HAProxy's own attempt to connect to %s", s.Remote)
	}
	if err == nil {
		err = ready(c)
	}
	if err != nil {
		if c != nil {
			c.Close()
		}
		return nil, false, err
	}
	s.conn = c
	return c, true, nil
}

// dial makes one session and says whether it collided (coll up in show
// peers across it).
func (s *Sender) dial(ctx context.Context, o peers.Options, accept, established time.Duration) (*peers.Conn, bool, error) {
	if _, err := s.Settled(ctx, 0, 15*time.Second, false); err != nil {
		return nil, false, fmt.Errorf("HAProxy's own attempt to connect to %s never ended: %w", s.Remote, err)
	}
	before, err := s.State(ctx)
	if err != nil {
		return nil, false, err
	}
	c, err := s.Accepted(ctx, o, accept)
	if err != nil {
		return nil, false, fmt.Errorf("harp's peers client was never accepted by %s (handshake status 200) within %g s", s.Node.Name, accept.Seconds())
	}
	after, err := s.Established(ctx, established)
	if err == nil {
		return c, after.Int("coll") != before.Int("coll"), nil
	}
	// A session that collided may be gone already, dropped by the check
	// after the superseded attempt's release: dialled again too.
	if after, serr := s.State(ctx); serr == nil && after.Int("coll") != before.Int("coll") {
		return c, true, nil
	}
	c.Close()
	return nil, false, fmt.Errorf("%s never showed harp's session established", s.Node.Name)
}

// Close closes the kept session, if any.
func (s *Sender) Close() {
	if s.conn != nil {
		s.conn.Close()
	}
}

// TableDef has the node send c an update (writing key with data in table
// on the stats socket) and gives the table definition the first update c
// got came with, waiting at most timeout.
func (p *Probe) TableDef(ctx context.Context, c *peers.Conn, table, key, data string, timeout time.Duration) (peerwire.TableDef, error) {
	if err := p.Node.SetEntry(ctx, node.StatsSocket, table, key, data); err != nil {
		return peerwire.TableDef{}, fmt.Errorf("writing on %s: %w", p.Node.Name, err)
	}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ev, err := c.WaitFor(wctx, func(e peers.Event) bool { return e.Update != nil && e.Table != nil })
	if err != nil {
		return peerwire.TableDef{}, fmt.Errorf("%s never sent harp an update of %s within %s: its table definition is unknown", p.Node.Name, table, timeout)
	}
	return *ev.Table, nil
}

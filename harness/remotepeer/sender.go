package remotepeer

import (
	"context"
	"fmt"
	"time"

	"github.com/harp-project/harp/harness/node"
	"github.com/harp-project/harp/harness/peers"
)

// Sender keeps one established session of the remote peer across the
// trials that send it crafted messages, dialling again once the last one
// ended.
type Sender struct {
	*Probe
	conn *peers.Conn
}

// Session is the kept session while it is open (fresh false), else a new
// one (fresh true): accepted (status 200) within accept, shown established
// by show peers within established, then made ready by ready. A session
// only half ready is closed, for the next call to dial again; the error
// says which step failed.
func (s *Sender) Session(ctx context.Context, o peers.Options, accept, established time.Duration, ready func(*peers.Conn) error) (c *peers.Conn, fresh bool, err error) {
	if s.conn != nil {
		if !s.conn.WaitClosed(0) {
			return s.conn, false, nil
		}
		s.conn = nil
	}
	if c, err = s.Accepted(ctx, o, accept); err != nil {
		return nil, false, fmt.Errorf("harp's peers client was never accepted by %s (handshake status 200) within %g s", s.Node.Name, accept.Seconds())
	}
	if _, err = s.Established(ctx, established); err != nil {
		err = fmt.Errorf("%s never showed harp's session established", s.Node.Name)
	} else {
		err = ready(c)
	}
	if err != nil {
		c.Close()
		return nil, false, err
	}
	s.conn = c
	return c, true, nil
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
func (p *Probe) TableDef(ctx context.Context, c *peers.Conn, table, key, data string, timeout time.Duration) (peers.TableDef, error) {
	if err := p.Node.SetEntry(ctx, node.StatsSocket, table, key, data); err != nil {
		return peers.TableDef{}, fmt.Errorf("writing on %s: %w", p.Node.Name, err)
	}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ev, err := c.WaitFor(wctx, func(e peers.Event) bool { return e.Update != nil && e.Table != nil })
	if err != nil {
		return peers.TableDef{}, fmt.Errorf("%s never sent harp an update of %s within %s: its table definition is unknown", p.Node.Name, table, timeout)
	}
	return *ev.Table, nil
}

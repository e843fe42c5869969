// Package peers is harp as a peer of HAProxy: the handshake, a session
// that sends and receives the messages harness/core/peerwire encodes and
// decodes, and what ended it (who closed, and why). A suite acts as a
// peer with it and observes replication without a second HAProxy.
package peers

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/harp-project/harp/harness/core/peerwire"
	"github.com/harp-project/harp/harness/live/cli"
)

// Handshake status codes.
const (
	StatusSuccess        = 200
	StatusTryAgain       = 300
	StatusProtocolError  = 501
	StatusBadVersion     = 502
	StatusLocalMismatch  = 503
	StatusRemoteMismatch = 504
)

// Version is the protocol version harp announces.
const Version = "2.1"

// Hello is the handshake a client sends.
type Hello struct {
	Remote string // the name of the peer being contacted (HAProxy's local peer)
	Local  string // the name harp claims: one of HAProxy's remote peers
	PID    int    // announced process id
}

// Bytes renders the three hello lines.
func (h Hello) Bytes() []byte {
	return []byte(fmt.Sprintf("HAProxyS %s\n%s\n%s %d 1\n", Version, h.Remote, h.Local, h.PID))
}

// Options tune how well-mannered the client is.
type Options struct {
	// Heartbeat is the interval between heartbeats, the first one sent one
	// interval after the handshake (as HAProxy does: 3 s). 0 sends none.
	Heartbeat time.Duration
	// Answer makes the client answer resync requests with resync-finished
	// (it has nothing to teach), confirm HAProxy's resync-finished or
	// partial, and ack updates. On by default through Dial.
	Answer bool
	// NoAcks: with Answer, updates go unacknowledged (each ack wakes
	// HAProxy's applet, which would hide an applet that fails to wake
	// itself).
	NoAcks bool
}

// DefaultOptions behave like a quiet, up-to-date peer.
var DefaultOptions = Options{Heartbeat: 3 * time.Second, Answer: true}

// Event is something the client received (or its end).
type Event struct {
	At     time.Time
	Msg    peerwire.Message
	Table  *peerwire.TableDef // the definition, or the table an update belongs to
	Update *peerwire.Update
	Ack    *peerwire.Ack
	Err    error // a decoding error; the stream goes on
}

// String describes an event for transcripts.
func (e Event) String() string {
	switch {
	case e.Err != nil:
		return fmt.Sprintf("%s: %v", e.Msg, e.Err)
	case e.Update != nil:
		var data []string
		for _, id := range e.Table.Types {
			if v := e.Update.Values[id]; len(v.Ints) > 0 {
				data = append(data, fmt.Sprintf("%s=%d", peerwire.DataTypes[id].Name, v.Ints[0]))
			}
		}
		return fmt.Sprintf("%s %s key=%s %s", e.Msg, e.Table.Name, e.Update.KeyString(*e.Table), strings.Join(data, " "))
	case e.Table != nil:
		return fmt.Sprintf("%s %s (id %d)", e.Msg, e.Table.Name, e.Table.ID)
	}
	return e.Msg.String()
}

// Conn is an established peers session.
type Conn struct {
	Hello  Hello
	Status int
	opts   Options
	c      net.Conn
	br     *bufio.Reader
	wmu    sync.Mutex
	// lastSend, sendGap (under wmu): when harp last wrote, and its longest
	// silence between two writes (the handshake counts as one).
	lastSend time.Time
	sendGap  time.Duration

	mu      sync.Mutex
	events  []Event
	changed chan struct{}                 // closed and replaced at each new event
	tables  map[uint64]*peerwire.TableDef // by the sender's table id
	current *peerwire.TableDef
	lastID  map[uint64]uint32

	closed   chan struct{}
	closeErr error
	closedAt time.Time
	stop     chan struct{}
	stopOnce sync.Once
}

// Dial connects, sends the hello and reads the status line. A status other
// than 200 is returned with a nil Conn and a nil error: it is an answer.
func Dial(ctx context.Context, addr string, h Hello, o Options) (*Conn, int, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, 0, err
	}
	return Handshake(ctx, c, h, o)
}

// Handshake runs the handshake on an open connection.
func Handshake(ctx context.Context, c net.Conn, h Hello, o Options) (*Conn, int, error) {
	if dl, ok := ctx.Deadline(); ok {
		c.SetDeadline(dl)
	} else {
		c.SetDeadline(time.Now().Add(10 * time.Second))
	}
	if _, err := c.Write(h.Bytes()); err != nil {
		c.Close()
		return nil, 0, fmt.Errorf("peers handshake: %w", err)
	}
	br := bufio.NewReader(c)
	line, err := br.ReadString('\n')
	if err != nil {
		c.Close()
		return nil, 0, fmt.Errorf("peers handshake: no status line: %w", err)
	}
	status, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		c.Close()
		return nil, 0, fmt.Errorf("peers handshake: bad status line %q", line)
	}
	if status != StatusSuccess {
		c.Close()
		return nil, status, nil
	}
	c.SetDeadline(time.Time{})
	pc := &Conn{Hello: h, Status: status, opts: o, c: c, br: br, changed: make(chan struct{}),
		tables: map[uint64]*peerwire.TableDef{}, lastID: map[uint64]uint32{}, closed: make(chan struct{}), stop: make(chan struct{}), lastSend: time.Now()}
	go pc.readLoop()
	if o.Heartbeat > 0 {
		go pc.heartbeats()
	}
	return pc, status, nil
}

// Send writes messages in order, stopping at the first that fails.
func (c *Conn) Send(ms ...peerwire.Message) error {
	for _, m := range ms {
		if err := c.SendRaw(m.Encode()); err != nil {
			return err
		}
	}
	return nil
}

// SendRaw writes bytes as they are: for malformed or truncated messages.
func (c *Conn) SendRaw(b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if f := cli.SendFault; f != nil {
		late, end := f("peers send")
		time.Sleep(late) // harp stalled: the gap counts (SendGap)
		if end {
			c.c.Close() // harp ends the session: never HAProxy's close (Ended)
			return fmt.Errorf("harp ended the session before sending (a harness fault)")
		}
	}
	c.c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	_, err := c.c.Write(b)
	if err == nil {
		now := time.Now()
		c.sendGap, c.lastSend = max(c.sendGap, now.Sub(c.lastSend)), now
	}
	return err
}

// Starved is why HAProxy dropping the session says nothing ("" when it
// does): harp sent nothing on it (its heartbeats are due every 3 s) for
// long enough, 4 s, that HAProxy's 5 s reconnect check may have found it
// silent.
func (c *Conn) Starved() string {
	if g := c.SendGap(); g >= 4*time.Second {
		return fmt.Sprintf("harp sent nothing on it for %s (a loaded machine?): HAProxy may have dropped it as silent", g.Round(time.Millisecond))
	}
	return ""
}

// SendGap is harp's longest silence on the session: between two of its
// writes, or from the last to the session's end (or now). HAProxy drops a
// peer it heard nothing from between two reconnect checks (5 s apart,
// counted in no_hbt): a silence that long, with heartbeats due every 3 s,
// is harp starved, not HAProxy's doing.
func (c *Conn) SendGap() time.Duration {
	end := time.Now()
	if at, _ := c.ClosedAt(); !at.IsZero() {
		end = at
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return max(c.sendGap, end.Sub(c.lastSend))
}

// Close closes the session.
func (c *Conn) Close() error {
	c.stopOnce.Do(func() { close(c.stop) })
	return c.c.Close()
}

// CloseAll closes every session of a list (a deferred cleanup of those a
// trial opened).
func CloseAll(cs []*Conn) {
	for _, c := range cs {
		if c == nil { // a handshake HAProxy refused left no session
			continue
		}
		c.Close()
	}
}

// Closed is closed when the peer (or Close) ended the session.
func (c *Conn) Closed() <-chan struct{} { return c.closed }

// WaitClosed waits at most d for the session to end and says whether it
// did; with d <= 0 it only looks.
func (c *Conn) WaitClosed(d time.Duration) bool {
	if d <= 0 {
		select {
		case <-c.closed:
			return true
		default:
			return false
		}
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-c.closed:
		return true
	case <-t.C:
		return false
	}
}

// ClosedAt is when the session ended (zero while it is open), and why.
func (c *Conn) ClosedAt() (time.Time, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closedAt, c.closeErr
}

// Events returns what was received so far.
func (c *Conn) Events() []Event {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Event(nil), c.events...)
}

// WaitFor waits until an event satisfies match, the session ends, or ctx
// is done.
func (c *Conn) WaitFor(ctx context.Context, match func(Event) bool) (Event, error) {
	seen := 0
	for {
		c.mu.Lock()
		evs, changed := append([]Event(nil), c.events...), c.changed
		c.mu.Unlock()
		for ; seen < len(evs); seen++ {
			if match(evs[seen]) {
				return evs[seen], nil
			}
		}
		select {
		case <-changed:
		case <-c.closed:
			// one last look at what arrived before the end
			for _, e := range c.Events()[seen:] {
				if match(e) {
					return e, nil
				}
			}
			_, err := c.ClosedAt()
			return Event{}, fmt.Errorf("session closed: %v", err)
		case <-ctx.Done():
			return Event{}, ctx.Err()
		}
	}
}

func (c *Conn) heartbeats() {
	t := time.NewTicker(c.opts.Heartbeat)
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-c.closed:
			return
		case <-t.C:
			if c.Send(peerwire.Control(peerwire.CtrlHeartbeat)) != nil {
				return
			}
		}
	}
}

func (c *Conn) readLoop() {
	var buf []byte
	chunk := make([]byte, 64<<10)
	var err error
	for {
		var n int
		n, err = c.br.Read(chunk)
		buf = append(buf, chunk[:n]...)
		for {
			m, used, derr := peerwire.DecodeMessage(buf)
			if errors.Is(derr, peerwire.ErrShort) {
				break
			}
			if derr != nil {
				err = derr
				break
			}
			buf = buf[used:]
			c.handle(m)
		}
		if err != nil {
			break
		}
	}
	if errors.Is(err, io.EOF) {
		err = io.EOF
	}
	c.mu.Lock()
	c.closedAt, c.closeErr = time.Now(), err
	c.mu.Unlock()
	close(c.closed)
	c.c.Close()
}

func (c *Conn) handle(m peerwire.Message) {
	ev := Event{At: time.Now(), Msg: m}
	var reply []peerwire.Message
	switch {
	case m.Class == peerwire.ClassControl && m.Type == peerwire.CtrlResyncRequest:
		reply = append(reply, peerwire.Control(peerwire.CtrlResyncFinished))
	case m.Class == peerwire.ClassControl && (m.Type == peerwire.CtrlResyncFinished || m.Type == peerwire.CtrlResyncPartial):
		reply = append(reply, peerwire.Control(peerwire.CtrlResyncConfirm))
	case m.Class == peerwire.ClassStickTable && m.Type == peerwire.StktDefine:
		def, err := peerwire.ParseTableDef(m.Body)
		ev.Err = err
		c.mu.Lock()
		if err == nil {
			c.tables[def.ID], c.current = &def, &def
			ev.Table = &def
		} else {
			// Updates that follow cannot be decoded against another table.
			delete(c.tables, def.ID)
			c.current = nil
		}
		c.mu.Unlock()
	case m.Class == peerwire.ClassStickTable && m.Type == peerwire.StktSwitch:
		s, err := peerwire.ParseSwitch(m.Body)
		ev.Err = err
		c.mu.Lock()
		if def, ok := c.tables[s.TableID]; ok && err == nil {
			c.current, ev.Table = def, def
		} else if err == nil {
			ev.Err = fmt.Errorf("switch to unknown table %d", s.TableID)
		}
		c.mu.Unlock()
	case m.Class == peerwire.ClassStickTable && m.Type == peerwire.StktAck:
		a, err := peerwire.ParseAck(m.Body)
		ev.Ack, ev.Err = &a, err
	case m.Class == peerwire.ClassStickTable && m.Type >= peerwire.StktUpdate && m.Type <= peerwire.StktIncUpdateTimed:
		c.mu.Lock()
		def := c.current
		c.mu.Unlock()
		if def == nil {
			ev.Err = fmt.Errorf("update before any table definition")
			break
		}
		u, err := peerwire.ParseUpdate(m, *def)
		ev.Table, ev.Err = def, err
		if err == nil {
			c.mu.Lock()
			if !u.HasID {
				u.ID = c.lastID[def.ID] + 1
			}
			c.lastID[def.ID] = u.ID
			c.mu.Unlock()
			ev.Update = &u
			if !c.opts.NoAcks {
				reply = append(reply, peerwire.Ack{TableID: def.ID, UpdateID: u.ID}.Encode())
			}
		}
	}
	c.record(ev)
	if c.opts.Answer {
		for _, r := range reply {
			if err := c.Send(r); err != nil {
				c.record(Event{At: time.Now(), Msg: r, Err: fmt.Errorf("sending the answer: %w", err)})
			}
		}
	}
}

// record keeps an event and wakes every waiter.
func (c *Conn) record(ev Event) {
	c.mu.Lock()
	c.events = append(c.events, ev)
	close(c.changed)
	c.changed = make(chan struct{})
	c.mu.Unlock()
}

// ClosedByPeer says the session ended because the other side closed or
// reset it, not because harp closed it or could not decode the stream.
func (c *Conn) ClosedByPeer() bool {
	byPeer, _ := c.Ended()
	return byPeer
}

// Ended says who ended the session and why: byPeer as ClosedByPeer, why
// the error it ended with (nil while it is open).
func (c *Conn) Ended() (byPeer bool, why error) {
	_, why = c.ClosedAt()
	return errors.Is(why, io.EOF) || errors.Is(why, syscall.ECONNRESET), why
}

package peers

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/harp-project/harp/harness/core/peerwire"
)

// scripted is an in-process peer: it accepts one connection, reads the
// hello, answers a status line, then lets the test send messages and read
// what the client sends.
type scripted struct {
	t    *testing.T
	ln   net.Listener
	conn net.Conn
	br   *bufio.Reader
	buf  []byte
}

func listen(t *testing.T) *scripted {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return &scripted{t: t, ln: ln}
}

// accept takes the connection and checks the hello; status is the line
// answered ("200", "501", or garbage).
func (s *scripted) accept(status string, want Hello) {
	s.t.Helper()
	c, err := s.ln.Accept()
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() { c.Close() })
	s.conn, s.br = c, bufio.NewReader(c)
	var hello strings.Builder
	for range 3 {
		line, err := s.br.ReadString('\n')
		if err != nil {
			s.t.Fatalf("reading the hello: %v", err)
		}
		hello.WriteString(line)
	}
	if hello.String() != string(want.Bytes()) {
		s.t.Errorf("hello %q, want %q", hello.String(), want.Bytes())
	}
	io.WriteString(c, status+"\n")
}

func (s *scripted) send(m peerwire.Message) {
	s.t.Helper()
	if _, err := s.conn.Write(m.Encode()); err != nil {
		s.t.Fatal(err)
	}
}

// next reads the next message the client sent, within a deadline.
func (s *scripted) next() peerwire.Message {
	s.t.Helper()
	s.conn.SetReadDeadline(time.Now().Add(3 * time.Second))
	chunk := make([]byte, 4096)
	for {
		if m, used, err := peerwire.DecodeMessage(s.buf); err == nil {
			s.buf = s.buf[used:]
			return m
		} else if !errors.Is(err, peerwire.ErrShort) {
			s.t.Fatalf("decoding what the client sent: %v", err)
		}
		n, err := s.br.Read(chunk)
		if err != nil {
			s.t.Fatalf("reading from the client: %v", err)
		}
		s.buf = append(s.buf, chunk[:n]...)
	}
}

var hello = Hello{Remote: "local", Local: "remote", PID: 42}

// dial connects a client to the scripted peer, which answers status.
func dial(t *testing.T, o Options, status string) (*scripted, *Conn, int, error) {
	s := listen(t)
	done := make(chan struct{})
	go func() { defer close(done); s.accept(status, hello) }()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, st, err := Dial(ctx, s.ln.Addr().String(), hello, o)
	<-done
	if c != nil {
		t.Cleanup(func() { c.Close() })
	}
	return s, c, st, err
}

func TestHandshakeStatuses(t *testing.T) {
	if _, c, st, err := dial(t, Options{}, "200"); err != nil || st != StatusSuccess || c == nil {
		t.Errorf("200: %v %d %v", c, st, err)
	}
	// A refusal is an answer, not an error.
	if _, c, st, err := dial(t, Options{}, "501"); err != nil || st != 501 || c != nil {
		t.Errorf("501: %v %d %v", c, st, err)
	}
	if _, c, _, err := dial(t, Options{}, "HTTP/1.1 400 Bad Request"); err == nil || c != nil || !strings.Contains(err.Error(), "bad status line") {
		t.Errorf("garbage status: %v %v", c, err)
	}
}

// The client answers what an up-to-date peer answers.
func TestAnswers(t *testing.T) {
	s, c, _, err := dial(t, Options{Answer: true}, "200")
	if err != nil {
		t.Fatal(err)
	}
	s.send(peerwire.Control(peerwire.CtrlResyncRequest))
	if m := s.next(); m.Class != peerwire.ClassControl || m.Type != peerwire.CtrlResyncFinished {
		t.Errorf("answer to a resync request: %s", m)
	}
	s.send(peerwire.Control(peerwire.CtrlResyncPartial))
	if m := s.next(); m.Type != peerwire.CtrlResyncConfirm {
		t.Errorf("answer to a partial resync: %s", m)
	}
	sendMarkerUpdate(t, s)
	m := s.next()
	a, err := peerwire.ParseAck(m.Body)
	if m.Type != peerwire.StktAck || err != nil || a.TableID != 3 || a.UpdateID != 7 {
		t.Errorf("ack: %s %+v %v", m, a, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	ev, err := c.WaitFor(ctx, func(e Event) bool { return e.Update != nil })
	if err != nil || ev.Table.Name != "sync/marker" || ev.Update.KeyString(*ev.Table) != "192.0.2.1" {
		t.Errorf("update event: %+v %v", ev, err)
	}
	if n, ok := ev.Update.Int("gpc0"); !ok || n != 5 {
		t.Errorf("gpc0 = %d %v", n, ok)
	}
}

// NoAcks: the client still answers a resync request but acks no update
// (an ack would wake HAProxy's applet behind a case's back).
func TestNoAcks(t *testing.T) {
	s, c, _, err := dial(t, Options{Answer: true, NoAcks: true}, "200")
	if err != nil {
		t.Fatal(err)
	}
	sendMarkerUpdate(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if _, err := c.WaitFor(ctx, func(e Event) bool { return e.Update != nil }); err != nil {
		t.Fatal(err)
	}
	s.send(peerwire.Control(peerwire.CtrlResyncRequest))
	if m := s.next(); m.Class != peerwire.ClassControl || m.Type != peerwire.CtrlResyncFinished {
		t.Errorf("the first message after an update: %s, want the resync answer (no ack)", m)
	}
}

// Without Answer the client stays silent: it must not refresh HAProxy's
// view of it behind a suite's back.
func TestSilentClient(t *testing.T) {
	s, c, _, err := dial(t, Options{}, "200")
	if err != nil {
		t.Fatal(err)
	}
	s.send(peerwire.Control(peerwire.CtrlResyncRequest))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if _, err := c.WaitFor(ctx, func(e Event) bool { return e.Msg.Type == peerwire.CtrlResyncRequest }); err != nil {
		t.Fatal(err)
	}
	s.conn.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if n, err := s.br.Read(make([]byte, 16)); n > 0 || err == nil {
		t.Errorf("a silent client sent %d bytes", n)
	}
}

func TestHeartbeats(t *testing.T) {
	s, _, _, err := dial(t, Options{Heartbeat: 50 * time.Millisecond}, "200")
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if m := s.next(); m.Class != peerwire.ClassControl || m.Type != peerwire.CtrlHeartbeat {
			t.Errorf("heartbeat: %s", m)
		}
	}
}

// Who ended a session is what #3519 judges on: the peer closing it is
// ClosedByPeer; harp closing it, or harp failing to decode, is not.
func TestWhoClosed(t *testing.T) {
	s, c, _, _ := dial(t, Options{}, "200")
	s.conn.Close()
	select {
	case <-c.Closed():
	case <-time.After(3 * time.Second):
		t.Fatal("a session the peer closed never ended")
	}
	if at, why := c.ClosedAt(); !c.ClosedByPeer() || at.IsZero() || !errors.Is(why, io.EOF) {
		t.Errorf("closed by the peer: %v %v %v", c.ClosedByPeer(), at, why)
	}
	if byPeer, why := c.Ended(); !byPeer || !errors.Is(why, io.EOF) || !c.WaitClosed(0) {
		t.Errorf("Ended after the peer closed: %v %v", byPeer, why)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if _, err := c.WaitFor(ctx, func(Event) bool { return false }); err == nil || !strings.Contains(err.Error(), "session closed") {
		t.Errorf("waiting on a closed session: %v", err)
	}

	_, c, _, _ = dial(t, Options{}, "200")
	if byPeer, why := c.Ended(); byPeer || why != nil || c.WaitClosed(0) || c.WaitClosed(50*time.Millisecond) {
		t.Errorf("an open session: ended %v %v", byPeer, why)
	}
	CloseAll([]*Conn{c})
	if !c.WaitClosed(3 * time.Second) {
		t.Fatal("a session harp closed never ended")
	}
	if byPeer, _ := c.Ended(); c.ClosedByPeer() || byPeer {
		t.Error("a session harp closed counts as closed by the peer")
	}

	s, c, _, _ = dial(t, Options{}, "200")
	s.conn.Write(peerwire.AppendVarint([]byte{peerwire.ClassReserved, 0x80}, peerwire.MaxBody+1)) // a body longer than any message
	select {
	case <-c.Closed():
	case <-time.After(3 * time.Second):
		t.Fatal("an undecodable stream never ended the session")
	}
	if _, why := c.ClosedAt(); c.ClosedByPeer() || why == nil || errors.Is(why, io.EOF) {
		t.Errorf("a decoding error is harp's own end, not the peer's: %v", why)
	}
	if byPeer, why := c.Ended(); byPeer || why == nil || errors.Is(why, io.EOF) {
		t.Errorf("Ended after a decoding error: %v %v", byPeer, why)
	}
}

// Send writes several messages in order.
func TestSendMany(t *testing.T) {
	s, c, _, err := dial(t, Options{}, "200")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Send(peerwire.Control(peerwire.CtrlResyncRequest), peerwire.Control(peerwire.CtrlHeartbeat), peerwire.Control(peerwire.CtrlResyncConfirm)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []byte{peerwire.CtrlResyncRequest, peerwire.CtrlHeartbeat, peerwire.CtrlResyncConfirm} {
		if m := s.next(); m.Class != peerwire.ClassControl || m.Type != want {
			t.Errorf("got %s, want control %d", m, want)
		}
	}
	c.Close()
	if err := c.Send(peerwire.Control(peerwire.CtrlHeartbeat), peerwire.Control(peerwire.CtrlHeartbeat)); err == nil {
		t.Error("sending on a closed session succeeded")
	}
}

// SendGap is harp's longest silence: between writes, and from the last to
// the session's end (a starved harp, not HAProxy, let it go quiet).
func TestSendGap(t *testing.T) {
	s, c, _, err := dial(t, Options{}, "200")
	if err != nil {
		t.Fatal(err)
	}
	if g := c.SendGap(); g > 100*time.Millisecond || c.Starved() != "" {
		t.Errorf("right after the handshake: gap %s, %q", g, c.Starved())
	}
	time.Sleep(150 * time.Millisecond) // a silence of harp's, measured
	if err := c.Send(peerwire.Control(peerwire.CtrlHeartbeat)); err != nil {
		t.Fatal(err)
	}
	s.next()
	if g := c.SendGap(); g < 150*time.Millisecond {
		t.Errorf("after a 150 ms silence: gap %s", g)
	}
	s.conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	c.WaitFor(ctx, func(Event) bool { return false })
	at, _ := c.ClosedAt()
	time.Sleep(50 * time.Millisecond)
	if g, g2 := c.SendGap(), c.SendGap(); at.IsZero() || g != g2 {
		t.Errorf("after the end the gap stops growing: %s then %s (closed at %s)", g, g2, at)
	}
}

// sendMarkerUpdate defines table 3 (sync/marker, an IPv4 key, gpc0) to
// the client and sends it update 7: 192.0.2.1 with gpc0 5.
func sendMarkerUpdate(t *testing.T, s *scripted) {
	t.Helper()
	def := peerwire.TableDef{ID: 3, Name: "sync/marker", KeyType: peerwire.KeyIPv4, KeyLen: 4, Types: []int{2}, Expire: 3600000}
	s.send(def.Encode())
	u := peerwire.Update{HasID: true, ID: 7, Key: []byte{192, 0, 2, 1}, Values: map[int]peerwire.Value{2: {Ints: []uint64{5}}}}
	um, err := u.Encode(def)
	if err != nil {
		t.Fatal(err)
	}
	s.send(um)
}

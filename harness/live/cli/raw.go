package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"time"
)

// RawOptions says how Raw sends and reads.
type RawOptions struct {
	// Name is how errors name the socket (a port such as "9998/tcp");
	// "" names it by its address.
	Name string
	// KeepOpen: the client never ends its side (by default it half-closes
	// after sending, the end of its input).
	KeepOpen bool
	// Abort: the client closes right after sending, reading nothing.
	Abort bool
	// Wait bounds the exchange once connected, sending and reading
	// (0: 10 s). A slower answer is the client's failure to observe.
	Wait time.Duration
	// Control, when set, lets an answer the server does not close be
	// whole: it runs after the payload is sent, on another connection to
	// the same server. A server that answered it had read the payload
	// before (one thread, sent earlier), so once it has, and Grace passes
	// with no more byte, what came is all it will send (Reply.Quiet): its
	// words, or its silence. A control that failed leaves such an answer
	// harp's (ErrCut, ErrNoAnswer).
	Control func(context.Context) error
	// Grace is the quiet after the control answered that ends the
	// reading (0: 1 s).
	Grace time.Duration
}

// Reply is what one raw exchange observed of the server. Only a reply
// with Closed (the server ended the connection after Text) or Quiet (it
// sent nothing more while it answered a control exchange) is the
// server's whole answer; Raw returns an error for any other end.
type Reply struct {
	Text string `json:"text"`
	// Closed: the server closed or reset the connection after Text.
	Closed bool `json:"closed,omitempty"`
	// Quiet: the connection still open, the server sent nothing more
	// for Grace after it answered a control exchange.
	Quiet bool `json:"quiet,omitempty"`
	// Aborted: the client closed right after sending, reading nothing (an
	// abort, or an empty payload): there is no answer to judge.
	Aborted bool `json:"aborted,omitempty"`
}

// ErrNoAnswer marks a raw exchange that got no byte at all by its
// deadline: no answer (a loaded machine is slow), never an empty one.
var ErrNoAnswer = errors.New("silence")

// ErrCut marks an answer harp's deadline cut: bytes came, and the server
// had not closed the connection by then, so they may be part of it only.
var ErrCut = errors.New("cut")

// Raw sends exactly payload on a fresh TCP connection to addr and reads
// until the server closes it (or resets it), or, with a Control, until it
// went quiet after answering the control: what came is the answer. A
// "\x00" in payload is a pause of the client's: what comes before it is
// sent, then the rest 600 ms later. An empty payload is a connection
// closed at once. Unlike Ask it adds no newline and nothing is retried;
// nor is it in any transcript.
//
// The error is harp's failure to observe (dialling, sending, the
// deadline): a reply returned with one is what came before it, never an
// answer.
func Raw(ctx context.Context, addr, payload string, o RawOptions) (Reply, error) {
	name, wait := cmp.Or(o.Name, addr), cmp.Or(o.Wait, 10*time.Second)
	conn, err := Dial(ctx, addr, name)
	if err != nil {
		return Reply{}, err
	}
	defer conn.Close()
	if payload == "" {
		return Reply{Aborted: true}, nil
	}
	conn.SetDeadline(time.Now().Add(wait))
	first, rest, paused := strings.Cut(payload, "\x00")
	if _, err := conn.Write([]byte(first)); err != nil {
		return Reply{}, fmt.Errorf("sending to %s: %w", name, err)
	}
	if paused {
		// The client's pause is the trigger, not a wait for an outcome.
		time.Sleep(600 * time.Millisecond)
		if _, err := conn.Write([]byte(rest)); err != nil {
			return Reply{}, fmt.Errorf("sending to %s: %w", name, err)
		}
	}
	if !o.KeepOpen {
		conn.CloseWrite()
	}
	if o.Abort {
		return Reply{Aborted: true}, nil // closed by the defer, unread
	}
	inj := inject(ctx, "raw", name)
	if inj.Err != nil {
		return Reply{}, fmt.Errorf("reading from %s: harp ended the connection before the answer: %w", name, inj.Err)
	}
	Sleep(ctx, inj.Late)
	deadline := time.Now().Add(wait)
	grace := cmp.Or(o.Grace, time.Second)
	// The control's end, read once the reading ends: nil when the server
	// answered it; from then on, Grace of quiet ends the reading.
	controlled := make(chan error, 1)
	var answeredAt atomic.Int64 // unix nanoseconds; 0 until the control was answered
	quiet := func() {           // the reading's end: Grace from now, within the deadline
		if end := time.Now().Add(grace); end.Before(deadline) {
			conn.SetReadDeadline(end)
		}
	}
	if o.Control != nil {
		go func() {
			err := o.Control(ctx)
			if err == nil {
				answeredAt.Store(time.Now().UnixNano())
				quiet()
			}
			controlled <- err
		}()
	}
	var b strings.Builder
	buf := make([]byte, 4096)
	looked := false // the last look after a deadline was taken
	var lastByte time.Time
	for {
		k, err := conn.Read(buf)
		b.Write(buf[:k])
		if k > 0 && inj.Cut {
			return Reply{Text: b.String()}, fmt.Errorf("harp stopped reading %s after %d bytes: %w", name, b.Len(), ErrCut)
		}
		if k > 0 {
			looked, lastByte = false, time.Now()
			if answeredAt.Load() != 0 {
				quiet() // still sending: its quiet starts again
			}
		}
		if err == nil {
			continue
		}
		r := Reply{Text: b.String()}
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() {
			r.Closed = true // closed by the server (or reset): what came is the answer
			return r, nil
		}
		if !looked {
			// A deadline that passed while harp was not scheduled hides
			// what had come in time: one more short read takes it.
			looked = true
			conn.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
			continue
		}
		var cerr error
		if o.Control != nil {
			select {
			case cerr = <-controlled:
				controlled <- cerr // kept for a later look
			default:
				cerr = errors.New("it had not ended")
			}
			// Quiet: nothing came for the grace since the control was
			// answered and since the last byte (a grace the deadline cut
			// short proves nothing).
			since := time.Unix(0, answeredAt.Load())
			if lastByte.After(since) {
				since = lastByte
			}
			if cerr == nil && time.Since(since) >= grace {
				r.Quiet = true
				return r, nil
			}
		}
		why := ""
		if cerr != nil {
			why = fmt.Sprintf(", and the control exchange failed (%v)", cerr)
		}
		if r.Text != "" {
			return r, fmt.Errorf("the answer on %s was cut by harp's %s deadline after %d bytes (not closed by then%s): %w", name, wait, len(r.Text), why, ErrCut)
		}
		return r, fmt.Errorf("no answer on %s within %s%s: %w", name, wait, why, ErrNoAnswer)
	}
}

// Dial connects to addr over TCP, within 5 s; an error names it name
// (its address when "").
func Dial(ctx context.Context, addr, name string) (*net.TCPConn, error) {
	if inj := inject(ctx, "dial", cmp.Or(name, addr)); inj.Err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", cmp.Or(name, addr), inj.Err)
	}
	d := net.Dialer{Timeout: 5 * time.Second}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", cmp.Or(name, addr), err)
	}
	return conn.(*net.TCPConn), nil
}

package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
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
}

// ErrNoAnswer marks a raw exchange that got no byte at all by its
// deadline: no answer (a loaded machine is slow), never an empty one.
var ErrNoAnswer = errors.New("silence")

// Raw sends exactly payload on a fresh TCP connection to addr and reads
// until the server closes it (or resets it): what came is the answer, also
// one the server sent without closing (the master CLI after an error). A
// "\x00" in payload is a pause of the client's: what comes before it is
// sent, then the rest 600 ms later. An empty payload is a connection
// closed at once. Unlike Ask it adds no newline and nothing is retried;
// nor is it in any transcript.
func Raw(ctx context.Context, addr, payload string, o RawOptions) (string, error) {
	name, wait := cmp.Or(o.Name, addr), cmp.Or(o.Wait, 10*time.Second)
	conn, err := Dial(ctx, addr, name)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	if payload == "" {
		return "", nil
	}
	conn.SetDeadline(time.Now().Add(wait))
	first, rest, paused := strings.Cut(payload, "\x00")
	if _, err := conn.Write([]byte(first)); err != nil {
		return "", fmt.Errorf("sending to %s: %w", name, err)
	}
	if paused {
		// The client's pause is the trigger, not a wait for an outcome.
		time.Sleep(600 * time.Millisecond)
		if _, err := conn.Write([]byte(rest)); err != nil {
			return "", fmt.Errorf("sending to %s: %w", name, err)
		}
	}
	if !o.KeepOpen {
		conn.CloseWrite()
	}
	if o.Abort {
		return "", nil // closed by the defer, unread
	}
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		k, err := conn.Read(buf)
		b.Write(buf[:k])
		if err == nil {
			continue
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() && b.Len() == 0 {
			return "", fmt.Errorf("no answer on %s within %s: %w", name, wait, ErrNoAnswer)
		}
		break // closed by the server (or reset): what came is the answer
	}
	return b.String(), nil
}

// Dial connects to addr over TCP, within 5 s; an error names it name
// (its address when "").
func Dial(ctx context.Context, addr, name string) (*net.TCPConn, error) {
	d := net.Dialer{Timeout: 5 * time.Second}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", cmp.Or(name, addr), err)
	}
	return conn.(*net.TCPConn), nil
}

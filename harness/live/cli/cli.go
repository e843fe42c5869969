// Package cli talks to HAProxy's runtime CLI: one command on a fresh
// connection (Ask), and raw bytes a test sends as a client would (Raw). What
// a run keeps of the exchanges is harness/core/record's. It depends on the
// standard library and core only.
package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"time"
)

// Ask sends one command to an HAProxy CLI (master or stats socket,
// "tcp" or "unix") on a fresh connection and reads the answer until the
// server closes: the CLI's non-interactive mode. It gives up after 10 s.
func Ask(ctx context.Context, network, addr, cmd string) (string, error) {
	return AskWith(ctx, network, addr, cmd, func(r io.Reader) (string, error) {
		var buf bytes.Buffer
		n, err := io.Copy(&buf, io.LimitReader(r, MaxAnswer+1))
		if n > MaxAnswer {
			return "", fmt.Errorf("%s: the answer to %q is larger than %d MiB: not read", addr, cmd, MaxAnswer>>20)
		}
		return buf.String(), err
	})
}

// AskWith is Ask with the answer read by read (the doctor reads within a
// memory budget shared by every socket of its run).
func AskWith(ctx context.Context, network, addr, cmd string, read func(io.Reader) (string, error)) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrNotSent, err)
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	}
	if _, err := io.WriteString(conn, cmd+"\n"); err != nil {
		return "", fmt.Errorf("%w: %w", ErrNotSent, err)
	}
	// The master CLI answers only once the client has finished sending.
	if cw, ok := conn.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
	}
	return read(conn)
}

// ErrNotSent marks an exchange whose command never reached the socket (the
// connection or the write failed): HAProxy did not see it, so a command
// that changes state may be sent again.
var ErrNotSent = errors.New("the command was not sent")

// MaxAnswer bounds what one command's answer may take in memory: a socket
// that streams without end must not exhaust harp.
var MaxAnswer int64 = 64 << 20

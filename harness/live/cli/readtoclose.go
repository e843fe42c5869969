package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"time"
)

// ReadToClose reads conn until the server closes it or wait passes: what
// came, and how the read ended: nil when the server closed the
// connection, a timeout (Timeout) when it was still open after wait,
// another error when it reset it. A suite that asks whether HAProxy
// closes a connection (a half-closed one, an idle CLI session, one
// waiting in a backlog) reads its fate so.
//
// A deadline that passed while harp was not scheduled would hide a close
// that came in time: after a timeout, one more short read takes what is
// already there.
func ReadToClose(conn net.Conn, wait time.Duration) ([]byte, error) {
	conn.SetReadDeadline(time.Now().Add(wait))
	inj := inject(context.Background(), "read-to-close", conn.RemoteAddr().String())
	if inj.Err != nil {
		return nil, fmt.Errorf("harp ended the read itself: %w", inj.Err) // a reset fate: unknown
	}
	Sleep(context.Background(), inj.Late)
	got, err := io.ReadAll(conn)
	if Timeout(err) {
		conn.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
		more, lateErr := io.ReadAll(conn)
		got = append(got, more...)
		if !Timeout(lateErr) {
			err = lateErr
		}
	}
	return got, err
}

// Timeout says whether err is a deadline's: the connection was still open.
func Timeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// Fate is how a connection harp read to its close ended.
type Fate string

const (
	Closed Fate = "closed" // the server closed it (an orderly end)
	Open   Fate = "open"   // still open when the wait ended
	Reset  Fate = "reset"  // reset, or another read error: not a close harp can attribute
)

// FateOf reads ReadToClose's error.
func FateOf(err error) Fate {
	switch {
	case err == nil:
		return Closed
	case Timeout(err):
		return Open
	}
	return Reset
}

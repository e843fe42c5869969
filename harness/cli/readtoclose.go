package cli

import (
	"errors"
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
func ReadToClose(conn net.Conn, wait time.Duration) ([]byte, error) {
	conn.SetReadDeadline(time.Now().Add(wait))
	return io.ReadAll(conn)
}

// Timeout says whether err is a deadline's: the connection was still open.
func Timeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

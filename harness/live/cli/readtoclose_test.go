package cli_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/harp-project/harp/harness/live/cli"
)

// A server that answers and closes is closed (nil); one that keeps the
// connection open is a timeout after the wait, with what it sent.
func TestReadToClose(t *testing.T) {
	hold := make(chan struct{})
	defer close(hold)
	for _, c := range []struct {
		name    string
		do      func(c *net.TCPConn)
		timeout bool
	}{
		{"closed", func(c *net.TCPConn) { c.Write([]byte("bye\n")) }, false},
		{"still open", func(c *net.TCPConn) { c.Write([]byte("bye\n")); <-hold }, true},
	} {
		conn, err := cli.Dial(context.Background(), serve(t, c.do), "")
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		got, err := cli.ReadToClose(conn, 200*time.Millisecond)
		conn.Close()
		if string(got) != "bye\n" || cli.Timeout(err) != c.timeout || !c.timeout && err != nil {
			t.Errorf("%s: %q, %v", c.name, got, err)
		}
		if c.timeout && time.Since(start) < 200*time.Millisecond {
			t.Errorf("%s: ended after %s, before the wait", c.name, time.Since(start))
		}
	}
	if cli.Timeout(nil) || cli.Timeout(net.ErrClosed) {
		t.Error("Timeout of no deadline's error")
	}
}

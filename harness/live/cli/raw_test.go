package cli_test

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/harp-project/harp/harness/live/cli"
)

// serve accepts one connection and runs do on it.
func serve(t *testing.T, do func(c *net.TCPConn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		do(c.(*net.TCPConn))
	}()
	return ln.Addr().String()
}

// A pause splits the payload in two writes; the client's end of input
// (half-close) is what the server reads to.
func TestRawPauseAndCloseWrite(t *testing.T) {
	got := make(chan string, 1)
	addr := serve(t, func(c *net.TCPConn) {
		b, _ := io.ReadAll(c)
		got <- string(b)
		c.Write([]byte("ok\n"))
	})
	start := time.Now()
	out, err := cli.Raw(context.Background(), addr, "show info;\x00show env\n", cli.RawOptions{Wait: 5 * time.Second})
	if err != nil || out != (cli.Reply{Text: "ok\n", Closed: true}) {
		t.Fatalf("answer %+v, %v", out, err)
	}
	if sent := <-got; sent != "show info;show env\n" || time.Since(start) < 600*time.Millisecond {
		t.Errorf("sent %q after %s", sent, time.Since(start))
	}
}

// No byte by the deadline is no answer, and bytes the server had not
// closed after by then are a cut answer: both harp's failure, never an
// answer (f084f4d returned the cut bytes as the whole answer).
func TestRawSilenceAndCutAreNoAnswer(t *testing.T) {
	hold := make(chan struct{})
	defer close(hold)
	addr := serve(t, func(*net.TCPConn) { <-hold })
	_, err := cli.Raw(context.Background(), addr, "x", cli.RawOptions{Name: "9998/tcp", KeepOpen: true, Wait: 200 * time.Millisecond})
	if !errors.Is(err, cli.ErrNoAnswer) || !strings.Contains(err.Error(), "no answer on 9998/tcp within 200ms") {
		t.Errorf("silence: %v", err)
	}
	addr = serve(t, func(c *net.TCPConn) { c.Write([]byte("partial")); <-hold })
	out, err := cli.Raw(context.Background(), addr, "x", cli.RawOptions{Wait: 200 * time.Millisecond})
	if !errors.Is(err, cli.ErrCut) || out.Closed || out.Text != "partial" {
		t.Errorf("an answer left open: %+v, %v", out, err)
	}
}

// A close without a byte is the server's empty answer, told apart from
// silence (f084f4d returned "" for both).
func TestRawEmptyClose(t *testing.T) {
	addr := serve(t, func(c *net.TCPConn) { io.ReadAll(c) })
	out, err := cli.Raw(context.Background(), addr, "x\n", cli.RawOptions{Wait: 2 * time.Second})
	if err != nil || out != (cli.Reply{Closed: true}) {
		t.Errorf("empty close: %+v, %v", out, err)
	}
}

// An answer the server does not close is whole once it answered a
// control sent after the payload and then sent nothing more for the
// grace: its words (the master CLI after an error), or its silence. With
// a control that failed, both stay harp's.
func TestRawQuietProvenByControl(t *testing.T) {
	hold := make(chan struct{})
	defer close(hold)
	addr := serve(t, func(*net.TCPConn) { <-hold })
	start := time.Now()
	out, err := cli.Raw(context.Background(), addr, "x", cli.RawOptions{KeepOpen: true, Wait: 5 * time.Second, Grace: 100 * time.Millisecond,
		Control: func(context.Context) error { return nil }})
	if err != nil || out != (cli.Reply{Quiet: true}) || time.Since(start) > 2*time.Second {
		t.Errorf("proven silence: %+v, %v after %s", out, err, time.Since(start))
	}
	addr = serve(t, func(c *net.TCPConn) { c.Write([]byte("Can't find the target PID\n")); <-hold })
	out, err = cli.Raw(context.Background(), addr, "@2 show info\n", cli.RawOptions{Wait: 5 * time.Second, Grace: 100 * time.Millisecond,
		Control: func(context.Context) error { time.Sleep(50 * time.Millisecond); return nil }})
	if err != nil || out != (cli.Reply{Text: "Can't find the target PID\n", Quiet: true}) {
		t.Errorf("words left open: %+v, %v", out, err)
	}
	// Still sending after the control: the quiet waits for its end.
	addr = serve(t, func(c *net.TCPConn) {
		for i := range 5 {
			c.Write([]byte{'a' + byte(i)})
			time.Sleep(60 * time.Millisecond)
		}
		<-hold
	})
	out, err = cli.Raw(context.Background(), addr, "x", cli.RawOptions{Wait: 5 * time.Second, Grace: 100 * time.Millisecond,
		Control: func(context.Context) error { return nil }})
	if err != nil || out.Text != "abcde" {
		t.Errorf("a slow answer: %+v, %v", out, err)
	}
	addr = serve(t, func(*net.TCPConn) { <-hold })
	out, err = cli.Raw(context.Background(), addr, "x", cli.RawOptions{KeepOpen: true, Wait: 200 * time.Millisecond,
		Control: func(context.Context) error { return errors.New("show info: i/o timeout") }})
	if !errors.Is(err, cli.ErrNoAnswer) || out.Quiet || !strings.Contains(err.Error(), "control exchange failed") {
		t.Errorf("unproven silence: %+v, %v", out, err)
	}
	addr = serve(t, func(c *net.TCPConn) { c.Write([]byte("partial")); <-hold })
	out, err = cli.Raw(context.Background(), addr, "x", cli.RawOptions{Wait: 200 * time.Millisecond,
		Control: func(context.Context) error { return errors.New("refused") }})
	if !errors.Is(err, cli.ErrCut) || out.Quiet {
		t.Errorf("unproven end: %+v, %v", out, err)
	}
}

// An empty payload and an abort read nothing: no answer to judge.
func TestRawEmptyAndAbort(t *testing.T) {
	addr := serve(t, func(c *net.TCPConn) { c.Write([]byte("banner\n")) })
	if out, err := cli.Raw(context.Background(), addr, "", cli.RawOptions{}); err != nil || out != (cli.Reply{Aborted: true}) {
		t.Errorf("empty payload: %+v, %v", out, err)
	}
	addr = serve(t, func(c *net.TCPConn) { c.Write([]byte("answer\n")) })
	if out, err := cli.Raw(context.Background(), addr, "quit\n", cli.RawOptions{Abort: true}); err != nil || out != (cli.Reply{Aborted: true}) {
		t.Errorf("abort: %+v, %v", out, err)
	}
}

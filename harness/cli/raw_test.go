package cli_test

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/harp-project/harp/harness/cli"
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
	if err != nil || out != "ok\n" {
		t.Fatalf("answer %q, %v", out, err)
	}
	if sent := <-got; sent != "show info;show env\n" || time.Since(start) < 600*time.Millisecond {
		t.Errorf("sent %q after %s", sent, time.Since(start))
	}
}

// No byte by the deadline is no answer; an answer the server sent without
// closing is kept.
func TestRawSilenceIsNoAnswer(t *testing.T) {
	hold := make(chan struct{})
	defer close(hold)
	addr := serve(t, func(*net.TCPConn) { <-hold })
	_, err := cli.Raw(context.Background(), addr, "x", cli.RawOptions{Name: "9998/tcp", KeepOpen: true, Wait: 200 * time.Millisecond})
	if !errors.Is(err, cli.ErrNoAnswer) || !strings.Contains(err.Error(), "no answer on 9998/tcp within 200ms") {
		t.Errorf("silence: %v", err)
	}
	addr = serve(t, func(c *net.TCPConn) { c.Write([]byte("partial")); <-hold })
	if out, err := cli.Raw(context.Background(), addr, "x", cli.RawOptions{Wait: 200 * time.Millisecond}); err != nil || out != "partial" {
		t.Errorf("an answer left open: %q, %v", out, err)
	}
}

// An empty payload and an abort read nothing.
func TestRawEmptyAndAbort(t *testing.T) {
	addr := serve(t, func(c *net.TCPConn) { c.Write([]byte("banner\n")) })
	if out, err := cli.Raw(context.Background(), addr, "", cli.RawOptions{}); err != nil || out != "" {
		t.Errorf("empty payload: %q, %v", out, err)
	}
	addr = serve(t, func(c *net.TCPConn) { c.Write([]byte("answer\n")) })
	if out, err := cli.Raw(context.Background(), addr, "quit\n", cli.RawOptions{Abort: true}); err != nil || out != "" {
		t.Errorf("abort: %q, %v", out, err)
	}
}

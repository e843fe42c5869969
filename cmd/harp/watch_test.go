package main

import (
	"bufio"
	"context"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestCheckListen(t *testing.T) {
	for addr, want := range map[string]string{
		"127.0.0.1:9650": "", ":9650": "", "[::1]:0": "", "localhost:9650": "", "mon.example:80": "",
		"nonsense": "want host:port", "127.0.0.1": "want host:port", "127.0.0.1:": "want a number",
		"127.0.0.1:99999": "want a number", "127.0.0.1:-1": "want a number", "127.0.0.1:http": "want a number",
		"a b:9650": "neither an IP address nor a host name", "/tmp/x:1": "neither",
	} {
		err := checkListen(addr)
		if (want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), want)) {
			t.Errorf("--listen %q: %v, want %q", addr, err, want)
		}
	}
}

func TestCheckInterval(t *testing.T) {
	for d, want := range map[time.Duration]string{
		time.Second: "", 15 * time.Second: "", time.Hour: "",
		0: "want 1s to 1h", 500 * time.Millisecond: "want 1s to 1h", -time.Second: "want 1s to 1h", time.Hour + time.Second: "want 1s to 1h",
	} {
		err := checkInterval(d)
		if (want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), want)) {
			t.Errorf("--interval %s: %v, want %q", d, err, want)
		}
	}
}

func TestCheckWatchFlags(t *testing.T) {
	for _, c := range []struct {
		watch bool
		set   []string
		want  string
	}{
		{true, []string{"listen", "interval", "socket", "name", "timeout"}, ""},
		{false, []string{"json", "settle", "socket"}, ""},
		{false, []string{"listen"}, "--listen goes with --watch"},
		{false, []string{"interval"}, "--interval goes with --watch"},
		{true, []string{"json"}, "--json is for one read"},
		{true, []string{"settle"}, "--settle is for one read"},
	} {
		set := map[string]bool{}
		for _, f := range c.set {
			set[f] = true
		}
		err := checkWatchFlags(c.watch, set)
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("watch=%v %v: %v, want %q", c.watch, c.set, err, c.want)
		}
	}
	if err := checkWatch("127.0.0.1:0", time.Second, time.Second, []string{"a", "b", "a"}); err == nil || !strings.Contains(err.Error(), `"a" given twice`) {
		t.Errorf("a name given twice: %v", err)
	}
	if err := checkWatch("127.0.0.1:0", time.Second, 0, []string{"a"}); err == nil || !strings.Contains(err.Error(), "--timeout") {
		t.Errorf("--timeout 0: %v", err)
	}
}

// fakeSocket answers show info as HAProxy would and counts connections.
func fakeSocket(t *testing.T) (string, *atomic.Int64) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	var n atomic.Int64
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			go func() {
				defer c.Close()
				cmd, _ := bufio.NewReader(c).ReadString('\n')
				if strings.TrimSpace(cmd) == "show info" {
					c.Write([]byte("Name: HAProxy\nVersion: 3.4.7-1\nPid: 8\nnode: lb1\n"))
				}
			}()
		}
	}()
	return l.Addr().String(), &n
}

// Bad input is exit 3 before any socket is read.
func TestWatchBadInputBeforeAnyWork(t *testing.T) {
	sock, conns := fakeSocket(t)
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for _, args := range [][]string{
		{"--watch", "--listen", "nonsense"},
		{"--watch", "--listen", "127.0.0.1:70000"},
		{"--watch", "--interval", "0s"},
		{"--watch", "--interval", "2h"},
		{"--watch", "--json"},
		{"--listen", "127.0.0.1:0"},
		{"--watch", "--listen", busy.Addr().String()}, // taken: net.Listen fails before any read
	} {
		if code := cmdDoctor(context.Background(), append(args, "--socket", sock)); code != 3 {
			t.Errorf("%v: exit %d, want 3", args, code)
		}
	}
	if n := conns.Load(); n != 0 {
		t.Errorf("bad input, and the socket was read %d time(s)", n)
	}
}

// An interrupt stops the monitor cleanly: exit 0, the port closed.
func TestWatchStopsOnInterrupt(t *testing.T) {
	sock, conns := fakeSocket(t)
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- cmdDoctor(ctx, []string{"--watch", "--listen", addr, "--interval", "1s", "--socket", sock, "--name", "lb1"})
	}()
	deadline := time.Now().Add(10 * time.Second)
	for conns.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if conns.Load() == 0 {
		t.Fatal("no read within 10 s")
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit %d after an interrupt, want 0", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("still running 10 s after the interrupt")
	}
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Error("still listening after it stopped")
	}
}

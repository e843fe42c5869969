package main

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"regexp"
	"strconv"
	"time"

	"github.com/harp-project/harp/harness/ops/monitor"
)

// checkWatchFlags refuses flags that belong to the other mode: --listen
// and --interval say nothing without --watch, and --json and --settle
// are for one read (a monitor serves every read).
func checkWatchFlags(watch bool, set map[string]bool) error {
	for _, f := range []string{"listen", "interval"} {
		if !watch && set[f] {
			return fmt.Errorf("--%s goes with --watch (harp doctor --watch --listen ADDR --interval D --socket ...)", f)
		}
	}
	for _, f := range []string{"json", "settle"} {
		if watch && set[f] {
			return fmt.Errorf("--%s is for one read; --watch serves every read at /metrics and on its page", f)
		}
	}
	return nil
}

var hostname = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$`)

// checkListen reads host:port as net.Listen will, before any socket is
// read: a typo is exit 3, not a monitor that never serves.
func checkListen(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--listen %q: want host:port (e.g. %s, or :9650 for every interface): %v", addr, monitor.DefaultListen, err)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 || port == "" {
		return fmt.Errorf("--listen %q: port %q: want a number from 0 to 65535 (0: any free port)", addr, port)
	}
	if _, err := netip.ParseAddr(host); host != "" && err != nil && !hostname.MatchString(host) {
		return fmt.Errorf("--listen %q: %q is neither an IP address nor a host name", addr, host)
	}
	return nil
}

// checkInterval bounds --interval: each read opens a connection per
// command on every socket, and an hour between reads is no monitor.
func checkInterval(d time.Duration) error {
	if d < monitor.MinInterval || d > monitor.MaxInterval {
		return fmt.Errorf("--interval %s: want %s to %s", d, monitor.MinInterval, "1h")
	}
	return nil
}

// checkWatch checks what --watch needs, before any work: where to
// listen, how often, and one name per instance (names label its metrics:
// two alike would be one series).
func checkWatch(listen string, interval, timeout time.Duration, names []string) error {
	if err := checkListen(listen); err != nil {
		return err
	}
	if err := checkInterval(interval); err != nil {
		return err
	}
	if timeout <= 0 {
		return fmt.Errorf("--timeout %s: want more than 0", timeout)
	}
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			return fmt.Errorf("instance %q given twice (--name, else --socket): each instance needs a name of its own, which labels its metrics", n)
		}
		seen[n] = true
	}
	return nil
}

// watchDoctor listens, then reads every socket each interval and serves
// the diagnosis until interrupted (exit 0); a port it cannot listen on is
// exit 3 before any socket is read.
func watchDoctor(ctx context.Context, listen string, o monitor.Options) int {
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return fail("doctor: --listen %s: %v", listen, err)
	}
	base := "http://" + ln.Addr().String()
	fmt.Fprintf(os.Stderr, "harp: doctor: watching %d socket(s) every %s; serving %s/ (metrics at %s/metrics, health at %s/healthz)\n", len(o.Sockets), o.Interval, base, base, base)
	if a, ok := ln.Addr().(*net.TCPAddr); ok && !a.IP.IsLoopback() {
		fmt.Fprintf(os.Stderr, "harp: doctor: %s is not loopback: anyone who reaches it reads the diagnosis (names and counts, never table keys)\n", ln.Addr())
	}
	o.Log = func(msg string) { fmt.Fprintf(os.Stderr, "harp: doctor: %s\n", msg) }
	m := monitor.New(o)
	if err := m.Serve(ctx, ln); err != nil {
		return fail("doctor: %v", err)
	}
	n := 0
	if s := m.Last(); s != nil {
		n = s.N
	}
	fmt.Fprintf(os.Stderr, "harp: doctor: stopped after %d read(s); no longer serving %s\n", n, base)
	return 0
}

package remotepeer

import (
	"bufio"
	"context"
	"io"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/harp-project/harp/harness/live/peers"
)

// Which show sess streams are peers streams (lines as 3.4.7 prints them,
// abridged).
func TestStreams(t *testing.T) {
	own := "0x7f20b2c77a00: proto=? ts=00 epoch=0 age=0s calls=3 rate=1 cpu=0 lat=0 scb=[3,8001h,fd=-1,rex=,wex=] exp=0s rc=1 c_exp=0s"
	cli := "0x7f20b2c78e00: proto=sockpair src=unix:1 fe=GLOBAL be=<NONE> srv=<none> ts=00 epoch=0 age=0s calls=1"
	stats := "0x7f20b2c78f00: proto=tcpv4 src=172.17.0.1:40100 fe=GLOBAL be=<NONE> srv=<none> ts=00 epoch=0 age=0s calls=1"
	peer := "0x7f20b2c78900: proto=tcpv4 src=172.17.0.1:59874 fe=local be=local srv=<none> ts=00 epoch=0 age=0s calls=1"
	for _, c := range []struct {
		name    string
		sess    string
		in, out []string
	}{
		{"only the CLI's own stream", cli + "\n", nil, nil},
		{"a CLI stream on the TCP stats socket", stats + "\n" + cli + "\n", nil, nil},
		{"HAProxy's own attempt to connect (no frontend connection)", own + "\n" + cli + "\n", nil, []string{"0x7f20b2c77a00"}},
		{"a peers session's stream not yet released, beside an attempt", own + "\n" + peer + "\n" + cli + "\n\n", []string{"0x7f20b2c78900"}, []string{"0x7f20b2c77a00"}},
		{"over IPv6", "0x1: proto=tcpv6 src=[::1]:4000 fe=local be=local\n", []string{"0x1"}, nil},
	} {
		in, out := streams(c.sess)
		if !slices.Equal(in, c.in) || !slices.Equal(out, c.out) {
			t.Errorf("%s: in %v out %v, want %v %v", c.name, in, out, c.in, c.out)
		}
	}
}

// fakePeer accepts handshakes on a local port and answers each with the
// next status of its list (the last one once the list is used up); hold
// says how long an accepted session stays open before fakePeer closes it.
func fakePeer(t *testing.T, hold time.Duration, statuses ...string) (*Probe, chan int) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	accepted := make(chan int, 100)
	go func() {
		for n := 0; ; n++ {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for range 3 {
					if _, err := br.ReadString('\n'); err != nil {
						return
					}
				}
				st := statuses[min(n, len(statuses)-1)]
				if st == "200" {
					accepted <- n // before the answer: the dial returns after it
				}
				io.WriteString(c, st+"\n")
				time.Sleep(hold)
			}()
		}
	}()
	return &Probe{Addr: ln.Addr().String(), Section: "s", Local: "local", Remote: "remote"}, accepted
}

// Accepted dials again until the handshake is answered 200.
func TestAccepted(t *testing.T) {
	p, _ := fakePeer(t, time.Minute, "300", "300", "200")
	c, err := p.Accepted(context.Background(), peers.Options{}, 5*time.Second)
	if err != nil || c == nil {
		t.Fatalf("accepted: %v %v", c, err)
	}
	c.Close()
	p, _ = fakePeer(t, time.Minute, "501")
	if c, err := p.Accepted(context.Background(), peers.Options{}, 300*time.Millisecond); err == nil || c != nil {
		t.Errorf("a peer that always refuses: %v %v", c, err)
	}
}

// KeepUp dials again whenever the session ends, until stop.
func TestKeepUp(t *testing.T) {
	p, accepted := fakePeer(t, 100*time.Millisecond, "200")
	stop := p.KeepUp(context.Background(), peers.Options{})
	for range 3 {
		select {
		case <-accepted:
		case <-time.After(5 * time.Second):
			t.Fatal("no session again after the last one ended")
		}
	}
	stop()
	for len(accepted) > 0 {
		<-accepted
	}
	select {
	case n := <-accepted:
		t.Errorf("session %d after stop", n)
	case <-time.After(300 * time.Millisecond):
	}
}

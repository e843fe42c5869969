package remotepeer

import (
	"slices"
	"testing"
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

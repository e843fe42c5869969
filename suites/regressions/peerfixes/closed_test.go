package peerfixes

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/harp-project/harp/harness/core/cliout"
)

// HAProxy's close after harp was starved for 6 s is no answer (f084f4d:
// REPRODUCED "closed by haproxy after 6s"); after harp kept its pace, it
// is the case's answer.
func TestClosedAnswer(t *testing.T) {
	if a, err := closedAnswer(true, nil, 6*time.Second, 6*time.Second); err == nil || !strings.Contains(err.Error(), "harp sent nothing for 6s") {
		t.Errorf("starved: %q %v", a, err)
	}
	if a, err := closedAnswer(true, nil, time.Second, 7*time.Second); err != nil || a != "closed by haproxy after 7s" {
		t.Errorf("kept pace: %q %v", a, err)
	}
	if _, err := closedAnswer(false, errors.New("decoding: bad class"), time.Second, time.Second); err == nil {
		t.Error("harp's own end read as HAProxy's")
	}
}

// A check passed is the reconnect timer shown higher than before and at
// 3 s or more, the session established; a kill's timer (under 2.1 s), a
// steady countdown, a failed or empty reading count nothing.
func TestCheckCounter(t *testing.T) {
	peer := func(reconnect string, established bool) cliout.Peer {
		p := cliout.Peer{Fields: map[string]string{"reconnect": reconnect}, Session: established, LastStatus: "ESTA"}
		if !established {
			p.LastStatus = "CONN"
		}
		return p
	}
	for _, c := range []struct {
		name  string
		reads []cliout.Peer
		want  int
	}{
		{"countdown, then two checks passed", []cliout.Peer{peer("2s", true), peer("1s", true), peer("4s", true), peer("3s", true), peer("0s", true), peer("4s", true)}, 2},
		{"the first reading is only a baseline", []cliout.Peer{peer("4s", true), peer("3s", true)}, 0},
		{"a kill sets the timer under 2.1 s", []cliout.Peer{peer("0s", true), peer("1s", false), peer("2s", true)}, 0},
		{"not established", []cliout.Peer{peer("0s", true), peer("4s", false)}, 0},
		{"no timer shown", []cliout.Peer{peer("1s", true), peer("", true), peer("<NEVER>", true), peer("4s", true)}, 1},
	} {
		var k checkCounter
		got := 0
		for _, r := range c.reads {
			got = k.read(r)
		}
		if got != c.want {
			t.Errorf("%s: %d checks passed, want %d", c.name, got, c.want)
		}
	}
}

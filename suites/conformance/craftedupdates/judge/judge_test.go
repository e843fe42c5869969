package judge

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harp-project/harp/harness/cliout"
	"github.com/harp-project/harp/harness/obs"
)

func TestJudge(t *testing.T) {
	for _, c := range []struct {
		name             string
		f                Facts
		violation, unmet string
	}{
		{"held", Facts{Kind: "huge expiry", Record: obs.Record{Observed: []string{"a timed update with expire 2147483647 ms made ce-006 expire in 9998 ms (gpc0=4)"}}}, "", ""},
		{"expiry beyond the table's", Facts{Kind: "huge expiry", Record: obs.Record{Violations: []string{"a timed update with expire 2147483647 ms made ce-006 expire in 2147483000 ms, beyond the table's 10s"}}},
			"huge expiry: a timed update with expire 2147483647 ms made ce-006 expire in 2147483000 ms, beyond the table's 10s", ""},
		{"several violations are all named", Facts{Kind: "unknown table", Record: obs.Record{Violations: []string{"the node closed harp's session", "an update for table `nosuch` (which the node lacks) was stored in `t`"}}},
			"unknown table: the node closed harp's session; an update for table `nosuch` (which the node lacks) was stored in `t`", ""},
		{"an unmet precondition outweighs what was seen", Facts{Kind: "huge expiry", Record: obs.Record{Unmet: "the crafted timed update (ce-001, expire 2147483647 ms) was never applied: its expiry cannot be judged",
			Violations: []string{"the node closed harp's session after the messages"}}}, "", "huge expiry: the crafted timed update (ce-001, expire 2147483647 ms) was never applied: its expiry cannot be judged"},
	} {
		v, u := Check(c.f)
		if v != c.violation || u != c.unmet {
			t.Errorf("%s:\n got  %q, %q\n want %q, %q", c.name, v, u, c.violation, c.unmet)
		}
	}
}

// From a nemesis run (seed 2, harp starved 1.5 s) on 3.0.11: harp's
// session had superseded HAProxy's own attempt to connect (coll=1), and
// HAProxy's reconnect check dropped it (no_hbt 0 -> 1, proto_err 0) after
// it had applied the update sent after the unknown table's messages. The
// check was REPRODUCED; it says nothing of the messages.
func TestHeartbeatDrop(t *testing.T) {
	peer := func(file string) cliout.Peer {
		t.Helper()
		raw, err := os.ReadFile(filepath.Join("testdata", file))
		if err != nil {
			t.Fatal(err)
		}
		secs, err := cliout.ParsePeers(string(raw))
		if err != nil {
			t.Fatal(err)
		}
		sec, _ := cliout.FindSection(secs, "crafted")
		p, ok := sec.Peer("remote")
		if !ok {
			t.Fatalf("%s: no peer remote", file)
		}
		return p
	}
	before, after := peer("show-peers-3.0.11-before.txt"), peer("show-peers-3.0.11-dropped-no-hbt.txt")
	if got := HeartbeatDrop(before, after); !strings.Contains(got, "no_hbt 0 -> 1, proto_err unchanged, coll 1") {
		t.Errorf("dropped by the reconnect check: %q", got)
	}
	if got := HeartbeatDrop(before, before); got != "" {
		t.Errorf("nothing dropped: %q", got)
	}
	// A protocol error beside it is the messages' doing.
	after.Fields["proto_err"] = "1"
	if got := HeartbeatDrop(before, after); got != "" {
		t.Errorf("proto_err up: %q", got)
	}
}

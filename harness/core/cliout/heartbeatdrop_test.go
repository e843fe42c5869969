package cliout

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// From a nemesis run (seed 2, harp starved 1.5 s) of
// conf-crafted-updates-obey-receiver on 3.0.11: harp's session had
// superseded HAProxy's own attempt to connect (coll=1), and HAProxy's
// reconnect check dropped it (no_hbt 0 -> 1, proto_err 0) after it had
// applied the update sent after the unknown table's messages. The check
// was REPRODUCED; it says nothing of the messages.
func TestHeartbeatDrop(t *testing.T) {
	peer := func(file string) Peer {
		t.Helper()
		raw, err := os.ReadFile(filepath.Join("testdata", file))
		if err != nil {
			t.Fatal(err)
		}
		secs, err := ParsePeers(string(raw))
		if err != nil {
			t.Fatal(err)
		}
		sec, _ := FindSection(secs, "crafted")
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

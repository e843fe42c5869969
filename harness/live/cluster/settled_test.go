package cluster

import (
	"testing"

	"github.com/harp-project/harp/harness/core/cliout"
)

func TestInFlight(t *testing.T) {
	for _, c := range []struct {
		local, pushed, acked uint64
		want                 string
	}{
		{0, 0, 0, ""},
		{57, 57, 57, ""},
		{57, 56, 56, "pushed 56 of local updates up to 57"},
		{57, 57, 50, "pushed 57, acknowledged 50"},
		// A session's start with an acknowledgement too old: HAProxy's
		// "far past" value, everything still to push.
		{3, 3 + 1<<31, 3 + 1<<31, "pushed 2147483651 of local updates up to 3"},
		// Across the 32-bit wrap.
		{2, 2, 2, ""},
		{1, 1<<32 - 1, 1<<32 - 1, "pushed 4294967295 of local updates up to 1"},
	} {
		got := InFlight(cliout.PeerTable{LocalUpdate: c.local, LastPushed: c.pushed, PeerAcked: c.acked})
		if got != c.want {
			t.Errorf("inFlight(local %d, pushed %d, acked %d) = %q, want %q", c.local, c.pushed, c.acked, got, c.want)
		}
	}
}

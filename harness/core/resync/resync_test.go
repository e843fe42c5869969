package resync

import (
	"testing"
	"time"
)

// make test, 3.4.7 beside three other packages on 2 CPUs: B restarted,
// meshed, and lacked the entry 30 s later; whether its link came up in
// time decides whether that says anything.
func TestLateLink(t *testing.T) {
	for _, c := range []struct {
		uptime, age time.Duration
		late        bool
	}{
		{31 * time.Second, 30 * time.Second, false}, // up within 2 s of the start
		{31 * time.Second, 27 * time.Second, false}, // at 5 s at the latest
		{31 * time.Second, 26 * time.Second, true},  // maybe 6 s: the timeout may have come first
		{40 * time.Second, 2 * time.Second, true},   // reconnected later: not the first link's resync
	} {
		if got := LateLink("B", "A", c.uptime, c.age) != ""; got != c.late {
			t.Errorf("uptime %s, handshake %s ago: late %v, want %v (%q)", c.uptime, c.age, got, c.late, LateLink("B", "A", c.uptime, c.age))
		}
	}
	if got, want := LateLink("B", "A", 31*time.Second, 26*time.Second), "B's link to A came up as late as 6s after B's worker started (uptime 31s, handshake 26s ago), beyond HAProxy's 5s resync timeout: B's resync may have ended untaught (a loaded machine?)"; got != want {
		t.Errorf("text:\n got  %q\n want %q", got, want)
	}
}

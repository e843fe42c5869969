package resync

import (
	"testing"
	"time"
)

// A correct build drops a learnt entry after its own expire (4 s in
// conf-learned-entries-obey-receiver): harp must have looked within that
// of the worker's start, and never paused as long.
func TestUnseen(t *testing.T) {
	const expire = 4 * time.Second
	for _, c := range []struct {
		uptime, sinceFirst, gap time.Duration
		unseen                  bool
	}{
		{31 * time.Second, 30 * time.Second, 20 * time.Millisecond, false},          // first read within 2 s of the start
		{31 * time.Second, 28500 * time.Millisecond, 100 * time.Millisecond, false}, // within 3.5 s
		{31 * time.Second, 28 * time.Second, 20 * time.Millisecond, true},           // maybe 4 s: it may have come and gone
		{31 * time.Second, 30 * time.Second, 4 * time.Second, true},                 // a 4 s pause between reads
		{31 * time.Second, 30 * time.Second, 3900 * time.Millisecond, false},        // a shorter one
	} {
		if got := Unseen("B", c.uptime, c.sinceFirst, c.gap, expire) != ""; got != c.unseen {
			t.Errorf("uptime %s, first read %s ago, pause %s: unseen %v, want %v (%q)", c.uptime, c.sinceFirst, c.gap, got, c.unseen, Unseen("B", c.uptime, c.sinceFirst, c.gap, expire))
		}
	}
	for _, c := range []struct{ got, want string }{
		{Unseen("B", 31*time.Second, 28*time.Second, 0, expire), "harp first read B's table as late as 4s after B's worker started (uptime 31s, first read 28s ago): an entry B learnt at its start could have expired (B's expire 4s) before harp looked (a loaded machine?)"},
		{Unseen("B", 31*time.Second, 30*time.Second, 4*time.Second, expire), "harp's reads of B's table paused for 4s, beyond B's expire 4s: an entry could have come and gone unseen (a loaded machine?)"},
	} {
		if c.got != c.want {
			t.Errorf("text:\n got  %q\n want %q", c.got, c.want)
		}
	}
}

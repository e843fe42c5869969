package node

import (
	"context"
	"fmt"
	"time"

	"github.com/harp-project/harp/harness/core/cliout"
	"github.com/harp-project/harp/harness/core/obs"
)

// Watch is how harp's reads went while it waited for an entry: when the
// first one answered, and the longest pause between two that answered.
// An entry that lives only a few seconds could come and go before the
// first or within a pause, on a loaded machine.
type Watch struct {
	First time.Time
	Gap   time.Duration
}

// WatchEntry is EntryOrUnmet (every 20 ms up to timeout; a last reading
// that failed makes r unmet) that also says how its reads went.
func (n *Node) WatchEntry(ctx context.Context, r *obs.Record, table, key string, timeout time.Duration) (cliout.Entry, bool, Watch) {
	var w Watch
	var last time.Time
	e, ok, err := n.WaitEntry(ctx, StatsSocket, table, key, timeout, 20*time.Millisecond, func(_ cliout.Entry, seen bool) bool {
		now := time.Now() // called after each read that answered
		if w.First.IsZero() {
			w.First = now
		} else {
			w.Gap = max(w.Gap, now.Sub(last))
		}
		last = now
		return seen
	})
	if err != nil && r.Unmet == "" {
		r.Unmet = fmt.Sprintf("reading %s kept failing: %v", table, err)
	}
	return e, ok, w
}

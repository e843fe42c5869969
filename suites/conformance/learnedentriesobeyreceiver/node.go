package learnedentriesobeyreceiver

// What the suite reads and does on its node: its own code (#43), moved
// from the toolkit, built on the node's primitives.

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/harp-project/harp/harness/core/cliout"
	"github.com/harp-project/harp/harness/core/obs"
	"github.com/harp-project/harp/harness/core/resync"
	"github.com/harp-project/harp/harness/live/node"
)

// untaught is why a node restarted afresh that lacks an entry of table,
// one a correct node keeps expire and that harp watched for (watchEntry's
// w), says nothing of its resync ("" when it does): harp never read the
// table; its link to peer (in section) came up past HAProxy's resync
// timeout, so its resync may have ended untaught (resync.LateLink); or
// harp read the table too late or too seldom to see the entry come and go
// (resync.Unseen). who and peerWho are the suite's names for the node and
// its peer in the reasons ("B", "A"). A reading that failed is a reason
// too: whether the link came up in time is then unknown.
func untaught(ctx context.Context, n *node.Node, w watch, table string, expire time.Duration, section, peer, who, peerWho string) string {
	if w.First.IsZero() {
		return fmt.Sprintf("harp never read %s's %s after the restart: whether %s learnt the entry is unknown", who, table, who)
	}
	sinceFirst := time.Since(w.First) // before the uptime read: errs towards unseen
	uptime, hdshk, err := n.LinkAge(ctx, section, peer)
	if err != nil {
		return fmt.Sprintf("whether %s's link to %s came up before its resync timeout is unknown: %s's %v", who, peerWho, who, err)
	}
	return cmp.Or(resync.LateLink(who, peerWho, uptime, hdshk), resync.Unseen(who, uptime, sinceFirst, w.Gap, expire))
}

// watch is how harp's reads went while it waited for an entry: when the
// first one answered, and the longest pause between two that answered.
// An entry that lives only a few seconds could come and go before the
// first or within a pause, on a loaded machine.
type watch struct {
	First time.Time
	Gap   time.Duration
}

// watchEntry is EntryOrUnmet (every 20 ms up to timeout; a last reading
// that failed makes r unmet) that also says how its reads went.
func watchEntry(ctx context.Context, n *node.Node, r *obs.Record, table, key string, timeout time.Duration) (cliout.Entry, bool, watch) {
	var w watch
	var last time.Time
	e, ok, err := n.WaitEntry(ctx, node.StatsSocket, table, key, timeout, 20*time.Millisecond, func(_ cliout.Entry, seen bool) bool {
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

// setOrUnmet writes key after key in table with data on the worker's
// stats socket (SetEntry, one command each); false when a write failed,
// which makes r's check unmet ("writing on <who>: <error>", replacing an
// earlier reason): what the check would read next says nothing of writes
// harp could not make. who is the check's name for the node ("A"). The
// write beside EntryOrUnmet's read.
func setOrUnmet(ctx context.Context, n *node.Node, r *obs.Record, who, table, data string, keys ...string) bool {
	for _, key := range keys {
		if err := n.SetEntry(ctx, node.StatsSocket, table, key, data); err != nil {
			r.Unmet = "writing on " + who + ": " + err.Error()
			return false
		}
	}
	return true
}

package node

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/harp-project/harp/harness/core/resync"
)

// Untaught is why a node restarted afresh that lacks an entry of table,
// one a correct node keeps expire and that harp watched for (WatchEntry's
// w), says nothing of its resync ("" when it does): harp never read the
// table; its link to peer (in section) came up past HAProxy's resync
// timeout, so its resync may have ended untaught (resync.LateLink); or
// harp read the table too late or too seldom to see the entry come and go
// (resync.Unseen). who and peerWho are the suite's names for the node and
// its peer in the reasons ("B", "A"). A reading that failed is a reason
// too: whether the link came up in time is then unknown.
func (n *Node) Untaught(ctx context.Context, w Watch, table string, expire time.Duration, section, peer, who, peerWho string) string {
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

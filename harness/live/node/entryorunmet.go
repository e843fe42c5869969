package node

import (
	"context"
	"fmt"
	"time"

	"github.com/harp-project/harp/harness/core/cliout"
	"github.com/harp-project/harp/harness/core/obs"
)

// EntryOrUnmet polls the worker's stats socket until key is in table, for
// at most timeout (0: one reading). A last reading that failed is no
// absence: it makes r's check unmet (its first unmet reason is kept).
func (n *Node) EntryOrUnmet(ctx context.Context, r *obs.Record, table, key string, timeout time.Duration) (cliout.Entry, bool) {
	e, ok, err := n.WaitEntry(ctx, StatsSocket, table, key, timeout, 20*time.Millisecond, func(_ cliout.Entry, ok bool) bool { return ok })
	if err != nil && r.Unmet == "" {
		r.Unmet = fmt.Sprintf("reading %s kept failing: %v", table, err)
	}
	return e, ok
}

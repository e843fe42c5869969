package node

import (
	"context"

	"github.com/harp-project/harp/harness/core/obs"
)

// SetOrUnmet writes key after key in table with data on the worker's
// stats socket (SetEntry, one command each); false when a write failed,
// which makes r's check unmet ("writing on <who>: <error>", replacing an
// earlier reason): what the check would read next says nothing of writes
// harp could not make. who is the check's name for the node ("A"). The
// write beside EntryOrUnmet's read.
func (n *Node) SetOrUnmet(ctx context.Context, r *obs.Record, who, table, data string, keys ...string) bool {
	for _, key := range keys {
		if err := n.SetEntry(ctx, StatsSocket, table, key, data); err != nil {
			r.Unmet = "writing on " + who + ": " + err.Error()
			return false
		}
	}
	return true
}

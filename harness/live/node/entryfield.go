package node

import (
	"context"

	"github.com/harp-project/harp/harness/core/obs"
)

// EntryField is one data field of a table entry (Entry): its value,
// "absent" when the table holds no such key, unknown when the read failed.
func (n *Node) EntryField(ctx context.Context, pid int, table, key, field string) obs.Of[string] {
	e, ok, err := n.Entry(ctx, pid, table, key)
	if err == nil && !ok {
		return obs.Value("absent")
	}
	return obs.From(e.Data[field], err)
}

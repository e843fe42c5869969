package tablefixes

// What the suite reads and does on its node: its own code (#43), moved
// from the toolkit, built on the node's primitives.

import (
	"cmp"
	"context"
	"fmt"

	"github.com/harp-project/harp/harness/core/cliout"
	"github.com/harp-project/harp/harness/live/node"
)

// listedTable is one table's head (its size and used entries, no entry)
// as the list of tables gives it (Tables): a wait on the entries of a
// table whose expired entries must stay untouched reads it, since a dump
// of the table kills the expired entries it walks. A list without the
// table is an error.
func listedTable(ctx context.Context, n *node.Node, pid int, table string) (cliout.Table, error) {
	ts, err := n.Tables(ctx, pid)
	for _, t := range ts {
		if t.Name == table {
			return t, nil
		}
	}
	return cliout.Table{}, cmp.Or(err, fmt.Errorf("no table %s in show table", table))
}

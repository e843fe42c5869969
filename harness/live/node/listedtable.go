package node

import (
	"cmp"
	"context"
	"fmt"

	"github.com/harp-project/harp/harness/core/cliout"
)

// ListedTable is one table's head (its size and used entries, no entry)
// as the list of tables gives it (Tables): a wait on the entries of a
// table whose expired entries must stay untouched reads it, since a dump
// of the table kills the expired entries it walks. A list without the
// table is an error.
func (n *Node) ListedTable(ctx context.Context, pid int, table string) (cliout.Table, error) {
	ts, err := n.Tables(ctx, pid)
	for _, t := range ts {
		if t.Name == table {
			return t, nil
		}
	}
	return cliout.Table{}, cmp.Or(err, fmt.Errorf("no table %s in show table", table))
}

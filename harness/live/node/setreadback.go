package node

import (
	"context"
	"fmt"

	"github.com/harp-project/harp/harness/core/cliout"
)

// SetAndReadBack writes keys with their values of field into every table
// on pid (SetEntries, table after table), then reads them all back on
// readPID (TableLoss): entries a trigger must keep are first seen there,
// or losing them says nothing. A write HAProxy refuses is the unmet
// precondition (its text in unmet, RefusalUnmet); err is harp's failure,
// to write or to read the tables back.
func (n *Node) SetAndReadBack(ctx context.Context, pid, readPID int, tables []string, field string, keys, values []string) (back cliout.TableLoss, unmet string, err error) {
	for _, table := range tables {
		if err := RefusalUnmet(n.SetEntries(ctx, pid, table, field, keys, values), &unmet); err != nil || unmet != "" {
			return back, unmet, err
		}
	}
	read := n.TableLoss(ctx, readPID, tables, field, keys, values)
	if l, ok := read.Get(); ok {
		return l, "", nil
	}
	return back, "", fmt.Errorf("reading back the entries written: %s", read.Why)
}

package tablefixes

// What the suite reads and does on its node: its own code (#43), moved
// from the toolkit, built on the node's primitives.

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/harp-project/harp/harness/core/cliout"
	"github.com/harp-project/harp/harness/live/node"
)

// loopsPerSecond is the worker's poll loops per second: show activity's loop
// count read twice, window apart (a fixed window measured, not a wait).
func loopsPerSecond(ctx context.Context, n *node.Node, pid int, window time.Duration) (int64, error) {
	sample := func() (int64, time.Time, error) {
		l, err := n.Loops(ctx, pid)
		return l, time.Now(), err
	}
	l0, t0, err := sample()
	if err != nil {
		return 0, err
	}
	time.Sleep(window)
	l1, t1, err := sample()
	if err != nil {
		return 0, err
	}
	return int64(float64(l1-l0) / t1.Sub(t0).Seconds()), nil
}

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

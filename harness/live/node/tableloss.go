package node

import (
	"context"

	"github.com/harp-project/harp/harness/core/cliout"
	"github.com/harp-project/harp/harness/core/obs"
)

// TableLoss reads each table on a worker, one after another, and says
// what each lacks of keys with their values of field (cliout.TableLoss);
// unknown when a table could not be read.
func (n *Node) TableLoss(ctx context.Context, pid int, tables []string, field string, keys, values []string) obs.Of[cliout.TableLoss] {
	l := cliout.TableLoss{Lost: map[string]int{}, Wrong: map[string]int{}}
	for _, table := range tables {
		tb, err := n.Table(ctx, pid, table)
		if err != nil {
			return obs.From(cliout.TableLoss{}, err)
		}
		l.Add(table, tb, field, keys, values)
	}
	return obs.Value(l)
}

package node

import (
	"context"

	"github.com/harp-project/harp/harness/cliout"
	"github.com/harp-project/harp/harness/obs"
)

// SetAndReadBack writes keys with their values of field into every table
// on pid (SetEntries, table after table; the first error ends it, a
// refusal as *Refused), then reads them all back on readPID (TableLoss):
// entries a trigger must keep are first seen there, or losing them says
// nothing. The loss is unknown when a table could not be read.
func (n *Node) SetAndReadBack(ctx context.Context, pid, readPID int, tables []string, field string, keys, values []string) (obs.Of[cliout.TableLoss], error) {
	for _, table := range tables {
		if err := n.SetEntries(ctx, pid, table, field, keys, values); err != nil {
			return obs.Of[cliout.TableLoss]{}, err
		}
	}
	return n.TableLoss(ctx, readPID, tables, field, keys, values), nil
}

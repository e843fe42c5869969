package node

import (
	"context"
	"time"

	"github.com/harp-project/harp/harness/core/cliout"
)

// WaitStatRow reads show stat every interval until ok holds for the row
// of proxy and server ("FRONTEND", "BACKEND" or a server's name; a zero
// row when show stat lacks it) or timeout passes: the last row read, and
// whether ok held for it. A failed read counts as not yet (Until). It is
// the wait for a runtime command's effect on a proxy (a frontend's slim
// after `set maxconn frontend`, its status after `disable frontend`, a
// count that reached a value).
func (n *Node) WaitStatRow(ctx context.Context, pid int, proxy, server string, timeout, interval time.Duration, ok func(cliout.StatRow) bool) (cliout.StatRow, bool) {
	row := func(rows []cliout.StatRow) cliout.StatRow {
		r, _ := cliout.FindStat(rows, proxy, server)
		return r
	}
	rows, held := Until(ctx, timeout, interval, func() ([]cliout.StatRow, error) { return n.Stat(ctx, pid) },
		func(rows []cliout.StatRow) bool { return ok(row(rows)) })
	return row(rows), held
}

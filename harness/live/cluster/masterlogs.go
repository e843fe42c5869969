package cluster

import (
	"context"

	"github.com/harp-project/harp/harness/core/verdict"
)

// ShowMasterLogs notes, for each member in turn, every process exit its
// master logged with a non-zero code, and shows the last lines of its
// master log; a member whose log harp could not read is skipped.
func ShowMasterLogs(ctx context.Context, t *verdict.Trial, members []*Member, lines int) {
	for _, m := range members {
		if exits, err := m.Node.Exits(ctx); err == nil {
			for _, e := range exits {
				if e.Code != 0 {
					t.Notef("%s: %s", m.Name, e.Line)
				}
			}
		}
		m.Node.ShowLogs(ctx, t, m.Name+" master log (last lines)", lines)
	}
}

package tables

// What the suite reads on its cluster: its own code (#43), moved from
// harness/live/cluster.

import (
	"context"
	"slices"
	"time"

	"github.com/harp-project/harp/harness/live/cluster"
	"github.com/harp-project/harp/harness/live/node"
)

// pushedAll polls a member's show peers until it has pushed every local
// update of the tables to peer, or timeout passed.
func pushedAll(ctx context.Context, c *cluster.Cluster, m *cluster.Member, peer string, timeout time.Duration, tables ...string) bool {
	err := node.Poll(ctx, timeout, 50*time.Millisecond, func() (bool, error) {
		s, err := m.Node.Section(ctx, node.StatsSocket, c.Section)
		if err != nil {
			return false, nil
		}
		p, ok := s.Peer(peer)
		if !ok {
			return false, nil
		}
		done := 0
		for _, pt := range p.Tables {
			if slices.Contains(tables, pt.Name) && pt.LocalUpdate > 0 && pt.LastPushed >= pt.LocalUpdate {
				done++
			}
		}
		return done == len(tables), nil
	})
	return err == nil
}

package suiteenv

import (
	"context"
	"time"

	"github.com/harp-project/harp/harness/live/cluster"
)

// StopCluster stops a cluster before the run ends (a suite that starts
// one per trial), after reading every member's crash evidence: a node
// removed unread is one whose crash harp could not see, which made the
// build's crash row INCONCLUSIVE on every build.
func (env *Env) StopCluster(ctx context.Context, c *cluster.Cluster) {
	var ws []watched
	for _, m := range c.Members {
		if m.Node != nil {
			ws = append(ws, watched{m.Name, m.Node})
		}
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Minute)
	env.collectAll(cctx, ws)
	cancel()
	c.StopWithin(ctx, time.Minute)
}

package suiteenv

import (
	"context"

	"github.com/harp-project/harp/harness/core/verdict"
	"github.com/harp-project/harp/harness/live/cluster"
)

// OnCluster starts one cluster for the run (StartCluster) and runs every
// trial on it; a cluster that never started or meshed is the outcome.
func (env *Env) OnCluster(ctx context.Context, o cluster.Options, mesh bool, trial func(ctx context.Context, c *cluster.Cluster, t *verdict.Trial) error) verdict.Outcome {
	c, unmet, err := env.StartCluster(ctx, o, mesh)
	if c == nil {
		return verdict.Outcome{Unmet: unmet, Err: err}
	}
	return env.RunTrials(ctx, func(ctx context.Context, t *verdict.Trial) error { return trial(ctx, c, t) })
}

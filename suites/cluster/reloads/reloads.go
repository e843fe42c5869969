// Package reloads: a reloaded node's new process learns its tables from
// the old one (local peer), else from the remote peers; entries written
// before a reload must survive it on every node, whether the nodes reload
// one after another or all at once, and while traffic keeps writing.
package reloads

import (
	"context"
	"fmt"
	"time"

	"github.com/harp-project/harp/harness/core/obs"
	"github.com/harp-project/harp/harness/core/suite"
	"github.com/harp-project/harp/harness/core/verdict"
	"github.com/harp-project/harp/harness/live/cluster"
	"github.com/harp-project/harp/harness/live/suiteenv"
	"github.com/harp-project/harp/harness/ops/clusterdoctor"
	"github.com/harp-project/harp/suites/cluster/reloads/judge"
)

var Suite = suite.Register(&suite.Suite{
	ID:       "cluster-reloads",
	Upstream: "peers replication conformance: rolling and simultaneous reloads",
	Title:    "Entries written before reloads survive them on every node, under write load",
	Summary:  "50 keys, write load from vegeta on every node, reloads one after another then all at once: every key survives on every node",
	Labels:   []string{"area:peers-cluster"},
	Trials:   2,
	Noun:     "rounds",
	Params:   []suite.Param{suite.NodesParam},
	StepsFor: func(p suite.Values) []string {
		return []string{
			fmt.Sprintf("Setup: the %d-node cluster of cluster-convergence; wait until every link is established; 50 keys set on node1 with gpc0 7, checked on every node.", p.Int("NODES")),
			"Write load: vegeta sends 50 requests/s to each node, each tracking one of 10 keys of its own (http_req_cnt grows), for the whole round.",
			"Trigger: odd rounds reload the nodes one after another (SIGUSR2, each waited for on the master CLI, the next once the cluster has meshed again); even rounds reload all of them at once.",
			"Expectation: once the cluster has meshed again, all 50 keys are on every node with gpc0 7, within 15 s. That wait ends early, keys missing, when two readings in a row (the keys where they were) show every session established, every resync finished and every local update pushed and acknowledged: no one writes those keys again, and a correct build sends an entry only as a local update or in a resync.",
		}
	},
	Run: run,
})

const reloadTimeout = 20 * time.Second

func run(ctx context.Context, env *suiteenv.Env) verdict.Outcome {
	c, unmet, err := env.StartCluster(ctx, cluster.Options{}, true)
	if c == nil {
		return verdict.Outcome{Unmet: unmet, Err: err}
	}
	pre := cluster.Keys("pre-", 50)
	if err := c.Members[0].SetKeys(ctx, cluster.DefaultTable, pre, "data.gpc0 7"); err != nil {
		return verdict.Outcome{Err: err}
	}
	if seen := cluster.Spread(ctx, c.Members, cluster.DefaultTable, pre, cluster.ConvergeTimeout); len(seen) < len(pre) {
		return verdict.Outcome{Unmet: fmt.Sprintf("before the reloads only %d of %d keys were on every node", len(seen), len(pre))}
	}
	return env.RunTrials(ctx, func(ctx context.Context, t *verdict.Trial) error { return trial(ctx, c, t, pre) })
}

// Evidence is how one round reloaded.
type Evidence struct {
	Reloads string      `json:"reloads"` // one after another, all at once
	Facts   judge.Facts `json:"facts"`
}

func trial(ctx context.Context, c *cluster.Cluster, t *verdict.Trial, pre []string) error {
	how := "one after another"
	if t.N%2 == 0 {
		how = "all at once"
	}
	ev := &Evidence{Reloads: how}
	t.Evidence = ev
	// Every key must be on every node before the round, or a loss found
	// after it could be an earlier round's, counted twice.
	if miss, err := cluster.Missing(ctx, c.Members, cluster.DefaultTable, pre); err != nil || len(miss) > 0 {
		t.Unmet = judge.UnmetBefore(miss, err, len(pre))
		return nil
	}
	stop := writeLoad(ctx, c.Members, 50, 10)
	// The load is writing on every node before the first reload.
	if seen, of := loadArrived(ctx, c.Members, cluster.ConvergeTimeout); seen < of {
		stop()
		t.Unmet = fmt.Sprintf("the write load never showed on every node (%d of %d nodes' first keys everywhere)", seen, of)
		return nil
	}
	t.Notef("before the reloads: %s", presence(ctx, c.Members, cluster.DefaultTable, pre))
	// One after another, the next once the cluster has meshed again, as an
	// operator would.
	errs := reloadEach(ctx, t, c.Members, how == "all at once", reloadTimeout, func(m *cluster.Member) string {
		if unmet := c.WaitMesh(ctx, cluster.MeshTimeout); unmet != "" {
			return "after reloading " + m.Name + ": " + unmet
		}
		t.Notef("after reloading %s: %s", m.Name, presence(ctx, c.Members, cluster.DefaultTable, pre))
		return ""
	})
	results := stop()
	showMasterLogs(ctx, t, c.Members, 12)
	errs = append(errs, noteLoad(t, c.Members, results)...)
	ev.Facts = judge.Facts{How: how, Problems: errs}
	return survived(ctx, c, t, &ev.Facts, pre)
}

// survived checks, once the cluster has meshed again, that every key
// written before is on every node with its data.
func survived(ctx context.Context, c *cluster.Cluster, t *verdict.Trial, f *judge.Facts, pre []string) error {
	f.Keys = len(pre)
	defer func() { t.Violation, t.Unmet = judge.Round(*f) }()
	if len(f.Problems) > 0 {
		return nil
	}
	if f.MeshAfter = c.WaitMesh(ctx, cluster.MeshTimeout); f.MeshAfter != "" {
		return nil
	}
	// The new processes have learnt what they will learn once meshed; give
	// a resync its bounded time before counting losses, then re-read. No
	// one writes the keys again: once nothing is in flight, a key missing
	// stays missing.
	seen, settled := c.SpreadSettled(ctx, cluster.DefaultTable, pre, cluster.ConvergeTimeout)
	if len(seen) < len(pre) {
		f.Settled = settled
		f.StillMissing = obs.Opt(obs.From(cluster.Missing(ctx, c.Members, cluster.DefaultTable, pre)))
	}
	f.WrongData = obs.Opt(obs.From(cluster.SettledData(ctx, c.Members, cluster.DefaultTable, map[string]cluster.Want{"gpc0": {Keys: pre, Value: "7"}}, 5*time.Second)))
	if f.StillMissing.State == "" && f.WrongData.Of == obs.Value("") { // every key seen, its data read
		t.Notef("after reloading %s: all %d keys on every node with gpc0 7", f.How, len(pre))
	}
	clusterdoctor.Show(ctx, c, t, "harp doctor after the reloads")
	return nil
}

// Package convergence: a peers section replicates every stick-table update
// to every peer (doc/peers-v2.0.txt, "stick-table update messages"): an
// entry written on one node, by the runtime API or by traffic tracking a
// counter, appears on every node with the same data.
package convergence

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/harp-project/harp/harness/core/obs"
	"github.com/harp-project/harp/harness/core/suite"
	"github.com/harp-project/harp/harness/core/verdict"
	"github.com/harp-project/harp/harness/live/cluster"
	"github.com/harp-project/harp/harness/live/suiteenv"
	"github.com/harp-project/harp/harness/ops/clusterdoctor"
	"github.com/harp-project/harp/suites/cluster/convergence/judge"
)

var Suite = suite.Register(&suite.Suite{
	ID:       "cluster-convergence",
	Upstream: "peers replication conformance: convergence",
	Title:    "Entries written on one node appear on every node of a peers cluster",
	Summary:  "per round 40 keys by `set table` on one node and 10 keys tracked by HTTP traffic on another: every key on every node within 15 s with the same data; time to converge (median, max)",
	Labels:   []string{"area:peers-cluster"},
	Trials:   3,
	Noun:     "rounds",
	Params:   []suite.Param{suite.NodesParam},
	StepsFor: func(p suite.Values) []string {
		return []string{
			fmt.Sprintf("Setup: %d nodes on a private network, each with its own address and peer line, the same peers section `cluster` with table `tbl` (type string len 32, store gpc0,http_req_cnt); HTTP frontend tracking the x-key header in it. Wait until every link is established.", p.Int("NODES")),
			"Trigger, per round: on one node (a different one each round) `set table cluster/tbl key c<r>NNN data.gpc0 <r>` for 40 keys; on the next node, 3 HTTP requests for each of 10 keys h<r>NNN (tracked: http_req_cnt 3).",
			"Expectation: within 15 s every key is on every node, with gpc0 = <r> and http_req_cnt = 3 everywhere. Measured: time for each key to be on every node (median, max).",
		}
	},
	Run: run,
})

// Evidence is what one round measured.
type Evidence struct {
	Keys      int         `json:"keys"`
	Converged int         `json:"converged"` // on every node within the bound of their own write
	MedianMs  int64       `json:"median_ms"`
	MaxMs     int64       `json:"max_ms"`
	Facts     judge.Facts `json:"facts"`
}

func run(ctx context.Context, env *suiteenv.Env) verdict.Outcome {
	return env.OnCluster(ctx, cluster.Options{}, true, trial)
}

func trial(ctx context.Context, c *cluster.Cluster, t *verdict.Trial) error {
	r := t.N
	writer, tracker := c.Members[(r-1)%len(c.Members)], c.Members[r%len(c.Members)]
	cli, web := cluster.Keys(fmt.Sprintf("c%d-", r), 40), cluster.Keys(fmt.Sprintf("h%d-", r), 10)
	f := judge.Facts{Keys: append(append([]string{}, cli...), web...)}
	// Write while watching: each key's delay and deadline count from its own write.
	w := write(ctx, func(ctx context.Context, wrote func(string)) error {
		if err := writer.SetKeys(ctx, cluster.DefaultTable, cli, "data.gpc0 "+strconv.Itoa(r), wrote); err != nil {
			return err
		}
		return tracker.HTTPKeys(ctx, web, 3, wrote)
	})
	at := spreadFrom(ctx, c.Members, cluster.DefaultTable, f.Keys, w, judge.ConvergeTimeout)
	written, err := w.done()
	if err != nil {
		return err
	}
	f.Delays = judge.Since(at, written)
	// Re-read before declaring a key missing: only keys still missing count.
	if len(at) < len(f.Keys) {
		f.StillMissing = obs.Opt(obs.From(cluster.Missing(ctx, c.Members, cluster.DefaultTable, f.Keys)))
	}
	f.WrongData = obs.From(cluster.SettledData(ctx, c.Members, cluster.DefaultTable,
		map[string]cluster.Want{"gpc0": {Keys: cli, Value: strconv.Itoa(r)}, "http_req_cnt": {Keys: web, Value: "3"}}, judge.ConvergeTimeout)) // a value's last update may wait on a link back from HAProxy's 5 s reconnect
	med, worst := judge.Durations(f.Delays)
	t.Evidence = &Evidence{Keys: len(f.Keys), Converged: len(f.Delays), MedianMs: med.Milliseconds(), MaxMs: worst.Milliseconds(), Facts: f}
	t.Notef("40 keys set on %s, 10 keys tracked by 30 requests on %s: %d of %d on every node within %s of their write; median %s, max %s",
		writer.Name, tracker.Name, len(f.Delays), len(f.Keys), judge.ConvergeTimeout, med.Round(time.Millisecond), worst.Round(time.Millisecond))
	t.Violation, t.Remark = judge.Round(f)
	clusterdoctor.Show(ctx, c, t, "harp doctor after the round")
	return nil
}

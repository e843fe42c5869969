package suites

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/harp-project/harp/harness/cluster"
	"github.com/harp-project/harp/harness/load"
	"github.com/harp-project/harp/harness/scenario"
	"github.com/harp-project/harp/harness/text"
	"github.com/harp-project/harp/harness/verdict"
)

// ClusterReloads: a reloaded node's new process learns its tables from the
// old one (local peer), else from the remote peers; entries written before
// a reload must survive it on every node, whether the nodes reload one
// after another or all at once, and while traffic keeps writing. Losses
// here are #3517-class bugs seen from a cluster.
var ClusterReloads = scenario.Register(&scenario.Scenario{
	ID:       "cluster-reloads",
	Upstream: "peers replication conformance: rolling and simultaneous reloads",
	Title:    "Entries written before reloads survive them on every node, under write load",
	Owner:    "area:peers-cluster",
	Labels:   []string{"issue:cluster-reloads", "area:peers-cluster"},
	Trials:   2,
	Noun:     "rounds",
	Steps: []string{
		"Setup: the 3-node cluster of cluster-convergence; wait until every link is established; 50 keys set on node1 with gpc0 7, checked on every node.",
		"Write load: vegeta sends 50 requests/s to each node, each tracking one of 10 keys of its own (http_req_cnt grows), for the whole round.",
		"Trigger: round 1 reloads node1, node2, node3 one after another (SIGUSR2, each waited for on the master CLI); round 2 reloads all three at once.",
		"Expectation: once the cluster has meshed again, all 50 keys are on every node with gpc0 7.",
	},
	Run: runReloads,
})

func runReloads(ctx context.Context, env *scenario.Env) verdict.Outcome {
	c, out, ok := startCluster(ctx, env, cluster.Options{}, true)
	if !ok {
		return out
	}
	defer c.Stop(context.WithoutCancel(ctx))
	pre := keys("pre-", 50)
	if err := setKeys(ctx, c.Members[0], clusterTable, pre, "data.gpc0 7"); err != nil {
		return verdict.Outcome{Err: err}
	}
	if seen := spread(ctx, c.Members, clusterTable, pre, convergeTimeout); len(seen) < len(pre) {
		return verdict.Outcome{Unmet: fmt.Sprintf("before the reloads only %d of %d keys were on every node", len(seen), len(pre))}
	}
	return rounds(ctx, env, "cluster-reloads", "round", out, func(r int) (verdict.Trial, error) { return reloadsRound(ctx, c, r, pre) })
}

func reloadsRound(ctx context.Context, c *cluster.Cluster, r int, pre []string) (t verdict.Trial, err error) {
	t.N, t.Evidence = r, map[string]any{}
	mk, t0 := mark(c), time.Now()
	defer func() { t.Exchanges, t.Duration = mk.exchanges(), time.Since(t0) }()
	simultaneous := r%2 == 0
	how := "one after another"
	if simultaneous {
		how = "all at once"
	}
	t.Evidence["reloads"] = how

	// Write load for the whole round, stopped once the reloads are done.
	loadCtx, stopLoad := context.WithCancel(ctx)
	var wg sync.WaitGroup
	results := make([]load.Result, len(c.Members))
	for i, m := range c.Members {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], _ = load.Attack(loadCtx, load.Options{URL: "http://" + m.HTTP + "/", Rate: 50, Duration: time.Minute,
				Timeout: 5 * time.Second, KeyHeader: "x-key", Keys: keys(fmt.Sprintf("load-%s-", m.Name), 10)})
		}()
	}
	// The load is writing on every node before the first reload.
	var firsts []string
	for _, m := range c.Members {
		firsts = append(firsts, fmt.Sprintf("load-%s-000", m.Name))
	}
	if seen := spread(ctx, c.Members, clusterTable, firsts, convergeTimeout); len(seen) < len(firsts) {
		stopLoad()
		wg.Wait()
		t.Unmet = fmt.Sprintf("the write load never showed on every node (%d of %d nodes' first keys everywhere)", len(seen), len(firsts))
		return t, nil
	}
	t.Notes = append(t.Notes, "before the reloads: "+presence(ctx, c.Members, pre))

	var notesMu sync.Mutex // reloads run concurrently in the simultaneous round
	reload := func(m *cluster.Member) error {
		rl, err := m.Node.Reload(ctx, reloadTimeout)
		if err != nil {
			return fmt.Errorf("%s: %w", m.Name, err)
		}
		notesMu.Lock()
		t.Notes = append(t.Notes, fmt.Sprintf("%s: new worker %d listed %s after SIGUSR2", m.Name, rl.NewPID, rl.NewUp.Round(time.Millisecond)))
		notesMu.Unlock()
		return nil
	}
	var errs []string
	if simultaneous {
		var mu sync.Mutex
		var rw sync.WaitGroup
		for _, m := range c.Members {
			rw.Add(1)
			go func() {
				defer rw.Done()
				if err := reload(m); err != nil {
					mu.Lock()
					errs = append(errs, err.Error())
					mu.Unlock()
				}
			}()
		}
		rw.Wait()
	} else {
		for _, m := range c.Members {
			if err := reload(m); err != nil {
				errs = append(errs, err.Error())
				break
			}
			// The next node reloads once this one has meshed again, as an operator would.
			if unmet := waitMesh(ctx, c, meshTimeout); unmet != "" {
				errs = append(errs, "after reloading "+m.Name+": "+unmet)
				break
			}
			t.Notes = append(t.Notes, "after reloading "+m.Name+": "+presence(ctx, c.Members, pre))
		}
	}
	stopLoad()
	wg.Wait()
	for _, m := range c.Members {
		if exits, err := m.Node.Exits(ctx); err == nil {
			for _, e := range exits {
				if e.Code != 0 {
					t.Notes = append(t.Notes, fmt.Sprintf("%s: %s", m.Name, e.Line))
				}
			}
		}
		if logs, err := m.Node.Logs(ctx); err == nil {
			t.Blocks = append(t.Blocks, verdict.Block{Title: m.Name + " master log (last lines)", Text: text.LastLines(logs, 12)})
		}
	}
	for i, res := range results {
		t.Notes = append(t.Notes, fmt.Sprintf("write load on %s: %s", c.Members[i].Name, res))
		if res.Requests == 0 || res.Success == 0 {
			errs = append(errs, fmt.Sprintf("no write load reached %s (%s)", c.Members[i].Name, res))
		}
	}
	if len(errs) > 0 {
		t.Unmet = "reloads " + how + ": " + strings.Join(errs, "; ")
		return t, nil
	}
	if unmet := waitMesh(ctx, c, meshTimeout); unmet != "" {
		t.Unmet = "after the reloads: " + unmet
		return t, nil
	}
	// The new processes have learnt what they will learn once meshed; give
	// a resync its bounded time before counting losses.
	seen := spread(ctx, c.Members, clusterTable, pre, convergeTimeout)
	if len(seen) < len(pre) {
		miss, err := missingOn(ctx, c.Members, clusterTable, pre)
		if err != nil {
			return t, err
		}
		t.Violation = fmt.Sprintf("after reloading %s, %d of %d keys written before are not on every node (%s)", how, len(pre)-len(seen), len(pre), countsOf(miss))
	} else if bad, err := wrongData(ctx, c.Members, pre, "gpc0", "7", nil, "", ""); err != nil {
		return t, err
	} else if bad != "" {
		t.Violation = bad
	} else {
		t.Notes = append(t.Notes, fmt.Sprintf("after reloading %s: all %d keys on every node with gpc0 7", how, len(pre)))
	}
	if d, err := diagnose(ctx, c); err == nil {
		t.Blocks = append(t.Blocks, doctorBlock("harp doctor after the reloads", d))
	}
	return t, nil
}

// presence says how many of the keys each member holds.
func presence(ctx context.Context, members []*cluster.Member, ks []string) string {
	var parts []string
	for _, m := range members {
		tb, err := tableOf(ctx, m, clusterTable)
		if err != nil {
			parts = append(parts, m.Name+": "+err.Error())
			continue
		}
		n := 0
		for _, k := range ks {
			if _, ok := tb.Lookup(k); ok {
				n++
			}
		}
		parts = append(parts, fmt.Sprintf("%s holds %d of %d", m.Name, n, len(ks)))
	}
	return strings.Join(parts, ", ")
}

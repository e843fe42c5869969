package suites

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/harp-project/harp/harness/cluster"
	"github.com/harp-project/harp/harness/scenario"
	"github.com/harp-project/harp/harness/verdict"
)

// ClusterConvergence: a peers section replicates every stick-table update
// to every peer (doc/peers-v2.0.txt, "stick-table update messages"): an
// entry written on one node, by the runtime API or by traffic tracking a
// counter, appears on every node with the same data.
var ClusterConvergence = scenario.Register(&scenario.Scenario{
	ID:       "cluster-convergence",
	Upstream: "peers replication conformance: convergence",
	Title:    "Entries written on one node appear on every node of a peers cluster",
	Owner:    "area:peers-cluster",
	Labels:   []string{"issue:cluster-convergence", "area:peers-cluster"},
	Trials:   3,
	Noun:     "rounds",
	Steps: []string{
		"Setup: 3 nodes on a private network, each with its own address and peer line, the same peers section `cluster` with table `tbl` (type string len 32, store gpc0,http_req_cnt); HTTP frontend tracking the x-key header in it. Wait until every link is established.",
		"Trigger, per round: on one node (a different one each round) `set table cluster/tbl key c<r>NNN data.gpc0 <r>` for 40 keys; on the next node, 3 HTTP requests for each of 10 keys h<r>NNN (tracked: http_req_cnt 3).",
		"Expectation: within 15 s every key is on every node, with gpc0 = <r> and http_req_cnt = 3 everywhere. Measured: time for each key to be on every node (median, max).",
	},
	Run: runConvergence,
})

func runConvergence(ctx context.Context, env *scenario.Env) verdict.Outcome {
	c, out, ok := startCluster(ctx, env, cluster.Options{}, true)
	if !ok {
		return out
	}
	defer c.Stop(context.WithoutCancel(ctx))
	return rounds(ctx, env, "cluster-convergence", "round", out, func(r int) (verdict.Trial, error) { return convergenceRound(ctx, c, r) })
}

func convergenceRound(ctx context.Context, c *cluster.Cluster, r int) (t verdict.Trial, err error) {
	t.N = r
	mk, t0 := mark(c), time.Now()
	defer func() { t.Exchanges, t.Duration = mk.exchanges(), time.Since(t0) }()
	writer, tracker := c.Members[(r-1)%len(c.Members)], c.Members[r%len(c.Members)]
	cli, web := keys(fmt.Sprintf("c%d-", r), 40), keys(fmt.Sprintf("h%d-", r), 10)
	all := append(append([]string{}, cli...), web...)
	// Write while watching, so each key's delay is measured from its own write.
	w := startWriting(ctx, func(ctx context.Context, wrote func(string)) error {
		if err := setKeys(ctx, writer, clusterTable, cli, "data.gpc0 "+strconv.Itoa(r), wrote); err != nil {
			return err
		}
		return httpKeys(ctx, tracker, web, 3, wrote)
	})
	at := spread(ctx, c.Members, clusterTable, all, convergeTimeout)
	written, err := w.done()
	if err != nil {
		return t, err
	}
	seen := since(at, written)
	med, worst := durations(seen)
	t.Notes = append(t.Notes, fmt.Sprintf("40 keys set on %s, 10 keys tracked by 30 requests on %s: %d of %d on every node; time to converge median %s, max %s",
		writer.Name, tracker.Name, len(seen), len(all), med.Round(time.Millisecond), worst.Round(time.Millisecond)))
	t.Evidence = map[string]any{"keys": len(all), "converged": len(seen), "median_ms": med.Milliseconds(), "max_ms": worst.Milliseconds()}
	if len(seen) < len(all) {
		miss, err := missingOn(ctx, c.Members, clusterTable, all)
		if err != nil {
			return t, err
		}
		t.Violation = fmt.Sprintf("%d of %d keys not on every node after %s (%s)", len(all)-len(seen), len(all), convergeTimeout, countsOf(miss))
	} else if bad, err := wrongData(ctx, c.Members, cli, "gpc0", strconv.Itoa(r), web, "http_req_cnt", "3"); err != nil {
		return t, err
	} else if bad != "" {
		t.Violation = bad
	}
	if d, err := diagnose(ctx, c); err == nil {
		t.Blocks = append(t.Blocks, doctorBlock("harp doctor after the round", d))
	}
	return t, nil
}

// wrongData checks the data replicated with the keys: want1 for field1 on
// keys1, want2 for field2 on keys2, on every node.
func wrongData(ctx context.Context, members []*cluster.Member, keys1 []string, field1, want1 string, keys2 []string, field2, want2 string) (string, error) {
	bad := 0
	example := ""
	for _, m := range members {
		t, err := tableOf(ctx, m, clusterTable)
		if err != nil {
			return "", err
		}
		check := func(ks []string, field, want string) {
			for _, k := range ks {
				if e, ok := t.Lookup(k); ok && e.Data[field] != want {
					bad++
					if example == "" {
						example = fmt.Sprintf("%s on %s has %s=%s, want %s", k, m.Name, field, e.Data[field], want)
					}
				}
			}
		}
		check(keys1, field1, want1)
		check(keys2, field2, want2)
	}
	if bad > 0 {
		return fmt.Sprintf("%d replicated entries hold other data than was written (e.g. %s)", bad, example), nil
	}
	return "", nil
}

func countsOf(miss map[string][]string) string {
	s := ""
	for _, name := range sortedNames(miss) {
		if s != "" {
			s += ", "
		}
		s += fmt.Sprintf("%s lacks %d", name, len(miss[name]))
	}
	return s
}

func sortedNames(m map[string][]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

package suites

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/harp-project/harp/harness/cluster"
	"github.com/harp-project/harp/harness/doctor"
	"github.com/harp-project/harp/harness/node"
	"github.com/harp-project/harp/harness/scenario"
	"github.com/harp-project/harp/harness/verdict"
)

// ClusterPartition: a peer cut off keeps its own writes and misses the
// others'; once the network heals, the peers reconnect and push what the
// other side has not acknowledged, so the tables converge again.
var ClusterPartition = scenario.Register(&scenario.Scenario{
	ID:       "cluster-partition",
	Upstream: "peers replication conformance: partition and heal",
	Title:    "Tables converge again after a network partition heals",
	Owner:    "area:peers-cluster",
	Labels:   []string{"issue:cluster-partition", "area:peers-cluster"},
	Trials:   1,
	Noun:     "partitions",
	Steps: []string{
		"Setup: the 3-node cluster of cluster-convergence; wait until every link is established.",
		"Trigger: disconnect node3 from the cluster network (it keeps running; harp still reaches its CLI). Write 20 keys on node1 and 20 on node3 while cut; wait until harp's doctor sees the links to node3 down (at most 20 s) and measure the divergence.",
		"Heal: reconnect node3 at its own address.",
		"Expectation: within 30 s every key written on either side is on every node. Measured: divergence during the cut, time until the doctor saw the partition, time to reconverge.",
	},
	Run: runPartition,
})

const (
	partitionSeen = 20 * time.Second
	healTimeout   = 30 * time.Second
)

func runPartition(ctx context.Context, env *scenario.Env) verdict.Outcome {
	c, out, ok := startCluster(ctx, env, cluster.Options{}, true)
	if !ok {
		return out
	}
	defer c.Stop(context.WithoutCancel(ctx))
	return rounds(ctx, env, "cluster-partition", "partition", out, func(r int) (verdict.Trial, error) { return partitionRound(ctx, c, r) })
}

func partitionRound(ctx context.Context, c *cluster.Cluster, r int) (t verdict.Trial, err error) {
	t.N, t.Evidence = r, map[string]any{}
	mk, t0 := mark(c), time.Now()
	defer func() { t.Exchanges, t.Duration = mk.exchanges(), time.Since(t0) }()
	if unmet := waitMesh(ctx, c, meshTimeout); unmet != "" {
		t.Unmet = "before the cut: " + unmet
		return t, nil
	}
	a, b, cut := c.Members[0], c.Members[1], c.Members[len(c.Members)-1]
	if err := c.Cut(ctx, cut); err != nil {
		return t, err
	}
	healed := false
	defer func() {
		if !healed {
			c.Heal(context.WithoutCancel(ctx), cut)
		}
	}()
	tCut := time.Now()
	left, right := keys(fmt.Sprintf("p%d-a", r), 20), keys(fmt.Sprintf("p%d-c", r), 20)
	if err := setKeys(ctx, a, clusterTable, left, "data.gpc0 1"); err != nil {
		return t, err
	}
	if err := setKeys(ctx, cut, clusterTable, right, "data.gpc0 2"); err != nil {
		return t, err
	}
	all := append(append([]string{}, left...), right...)
	// The majority side still replicates among itself.
	if seen := spread(ctx, c.Members[:len(c.Members)-1], clusterTable, left, convergeTimeout); len(seen) < len(left) {
		t.Notes = append(t.Notes, fmt.Sprintf("during the cut only %d of %d keys written on %s reached %s", len(seen), len(left), a.Name, b.Name))
	}
	// The doctor should see the partition once HAProxy notices it (no heartbeat).
	var during doctor.Diagnosis
	pollErr := node.Poll(ctx, partitionSeen, 500*time.Millisecond, func() (bool, error) {
		d, err := diagnose(ctx, c)
		if err != nil {
			return false, err
		}
		during = d
		return linkDownTo(d, cut.Name), nil
	})
	if pollErr != nil && !errors.Is(pollErr, node.ErrDeadline) {
		return t, pollErr
	}
	seenAfter := time.Since(tCut)
	t.Evidence["doctor_saw_partition"] = linkDownTo(during, cut.Name)
	t.Evidence["doctor_codes_during_cut"] = codes(during)
	if linkDownTo(during, cut.Name) {
		t.Notes = append(t.Notes, fmt.Sprintf("harp doctor saw the links to %s down %s after the cut", cut.Name, seenAfter.Round(100*time.Millisecond)))
	} else {
		t.Unmet = fmt.Sprintf("the cut did not take: harp doctor still saw the links to %s up %s after it", cut.Name, partitionSeen)
		return t, nil
	}
	// The cut is real only if what was written on the cut side stayed there.
	if leaked, err := missingOn(ctx, []*cluster.Member{a}, clusterTable, right); err != nil {
		return t, err
	} else if len(leaked[a.Name]) < len(right) {
		t.Unmet = fmt.Sprintf("the cut did not take: %d keys written on %s during the cut reached %s", len(right)-len(leaked[a.Name]), cut.Name, a.Name)
		return t, nil
	}
	for _, tv := range during.Tables {
		if tv.Name == clusterTable {
			t.Notes = append(t.Notes, fmt.Sprintf("divergence during the cut: %d of %d keys (%.0f%%) not on every node", tv.Diverging, tv.Keys, tv.Percent))
			t.Evidence["divergence_pct"] = tv.Percent
		}
	}
	t.Blocks = append(t.Blocks, doctorBlock("harp doctor during the cut", during))

	if err := c.Heal(ctx, cut); err != nil {
		return t, err
	}
	healed = true
	tHeal := time.Now()
	at := spread(ctx, c.Members, clusterTable, all, healTimeout)
	var last time.Time
	for _, x := range at {
		if x.After(last) {
			last = x
		}
	}
	if len(at) < len(all) {
		miss, err := missingOn(ctx, c.Members, clusterTable, all)
		if err != nil {
			return t, err
		}
		t.Violation = fmt.Sprintf("%d of %d keys not on every node %s after the heal (%s)", len(all)-len(at), len(all), healTimeout, countsOf(miss))
	} else {
		t.Notes = append(t.Notes, fmt.Sprintf("reconverged %s after the heal: all %d keys on every node", last.Sub(tHeal).Round(10*time.Millisecond), len(all)))
		t.Evidence["reconverge_ms"] = last.Sub(tHeal).Milliseconds()
	}
	if d, err := diagnose(ctx, c); err == nil {
		t.Blocks = append(t.Blocks, doctorBlock("harp doctor after the heal", d))
	}
	return t, nil
}

// linkDownTo says whether the doctor reports a link to a member down.
func linkDownTo(d doctor.Diagnosis, name string) bool {
	for _, l := range d.Links {
		if !l.Established && (l.Peer == name || l.From == name) {
			return true
		}
	}
	return false
}

func codes(d doctor.Diagnosis) []string {
	var out []string
	for _, f := range d.Findings {
		out = append(out, f.Code)
	}
	return out
}

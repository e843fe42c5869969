// Package partition: a peer cut off keeps its own writes and misses the
// others'; once the network heals, the peers reconnect and push what the
// other side has not acknowledged, so the tables converge again.
package partition

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
	"github.com/harp-project/harp/harness/ops/doctor"
	"github.com/harp-project/harp/suites/cluster/partition/judge"
)

var Suite = suite.Register(&suite.Suite{
	ID:       "cluster-partition",
	Upstream: "peers replication conformance: partition and heal",
	Title:    "Tables converge again after a network partition heals",
	Summary:  "the last node cut off the network, 20 keys written on each side, heal: every key on every node within 30 s; divergence during the cut, time until the doctor saw it, time to reconverge",
	Labels:   []string{"area:peers-cluster"},
	Trials:   1,
	Noun:     "partitions",
	Params:   []suite.Param{suite.NodesParam},
	StepsFor: func(p suite.Values) []string {
		last := fmt.Sprintf("node%d", p.Int("NODES"))
		return []string{
			fmt.Sprintf("Setup: the %d-node cluster of cluster-convergence; wait until every link is established.", p.Int("NODES")),
			fmt.Sprintf("Trigger: disconnect %s from the cluster network (it keeps running; harp still reaches its CLI). Write 20 keys on node1 and 20 on %s while cut; wait until harp's doctor sees the links to %s down (at most 20 s) and measure the divergence.", last, last, last),
			fmt.Sprintf("Heal: reconnect %s at its own address.", last),
			"Expectation: within 30 s every key written on either side is on every node (a wait that ends early, keys missing, when two readings in a row, the keys where they were, show every session established, every resync finished and every local update pushed and acknowledged: no one writes those keys again, and a correct build sends an entry only as a local update or in a resync). Measured: divergence during the cut, time until the doctor saw the partition, time to reconverge.",
		}
	},
	Run: run,
})

// Evidence is what one partition recorded.
type Evidence struct {
	DoctorSawPartition bool          `json:"doctor_saw_partition"`
	DoctorCodes        []doctor.Code `json:"doctor_codes_during_cut"`
	DivergencePct      float64       `json:"divergence_pct"`
	ReconvergeMs       int64         `json:"reconverge_ms,omitempty"`
	Reconverged        bool          `json:"reconverged"`
	Facts              judge.Facts   `json:"facts"`
}

func run(ctx context.Context, env *suiteenv.Env) verdict.Outcome {
	return env.OnCluster(ctx, cluster.Options{}, true, trial)
}

func trial(ctx context.Context, c *cluster.Cluster, t *verdict.Trial) error {
	ev := &Evidence{}
	t.Evidence = ev
	a, cut := c.Members[0], c.Members[len(c.Members)-1]
	f := &ev.Facts
	f.Cut = cut.Name
	defer func() { t.Violation, t.Unmet = judge.Partition(*f) }()
	if f.MeshBefore = c.WaitMesh(ctx, cluster.MeshTimeout); f.MeshBefore != "" {
		return nil
	}
	if err := c.Cut(ctx, cut); err != nil {
		return err
	}
	defer c.HealIfCut(context.WithoutCancel(ctx), cut)
	tCut := time.Now()
	left, right := cluster.Keys(fmt.Sprintf("p%d-a", t.N), 20), cluster.Keys(fmt.Sprintf("p%d-c", t.N), 20)
	if err := a.SetKeys(ctx, cluster.DefaultTable, left, "data.gpc0 1"); err != nil {
		return err
	}
	if err := cut.SetKeys(ctx, cluster.DefaultTable, right, "data.gpc0 2"); err != nil {
		return err
	}
	all := append(append([]string{}, left...), right...)
	f.Keys = len(all)
	// The majority side still replicates among itself.
	if seen := cluster.Spread(ctx, c.Members[:len(c.Members)-1], cluster.DefaultTable, left, cluster.ConvergeTimeout); len(seen) < len(left) {
		t.Notef("during the cut only %d of %d keys written on %s reached the other connected nodes", len(seen), len(left), a.Name)
	}
	// Until the doctor sees the links to the cut node down.
	during, err := clusterdoctor.Until(ctx, c, judge.PartitionSeen, 500*time.Millisecond, func(d doctor.Diagnosis) bool { return d.LinkDownTo(cut.Name) })
	if err != nil {
		return err
	}
	ev.DoctorSawPartition, ev.DoctorCodes = during.LinkDownTo(cut.Name), during.Codes()
	if f.SawCut = ev.DoctorSawPartition; !f.SawCut {
		return nil
	}
	t.Notef("harp doctor saw the links to %s down %s after the cut", cut.Name, time.Since(tCut).Round(100*time.Millisecond))
	// The cut is real only if what was written on the cut side stayed there.
	leaked := a.Holds(ctx, cluster.DefaultTable, right)
	f.Leaked = obs.Opt(obs.Failure[int]("%s", leaked.Why))
	if n, ok := leaked.Get(); ok {
		f.Leaked = obs.Opt(obs.Value(n))
	}
	if n, ok := f.Leaked.Get(); !ok || n > 0 {
		return nil
	}
	if tv, ok := during.Table(cluster.DefaultTable); ok {
		t.Notef("divergence during the cut: %d of %d keys (%.0f%%) not on every node", tv.Diverging, tv.Keys, tv.Percent)
		ev.DivergencePct = tv.Percent
	}
	t.Show("harp doctor during the cut", during.Text())
	if err := c.Heal(ctx, cut); err != nil {
		return err
	}
	return reconverge(ctx, c, cut, t, ev, f, all)
}

// reconverge waits for the links to come back, then for every key on
// every node, and re-reads what is still missing.
func reconverge(ctx context.Context, c *cluster.Cluster, cut *cluster.Member, t *verdict.Trial, ev *Evidence, f *judge.Facts, all []string) error {
	tHeal := time.Now()
	if unmet := c.WaitMesh(ctx, judge.HealTimeout); unmet != "" {
		// Unmet either way: the probe only says why.
		f.LinksBack = fmt.Sprintf("%s (network probe: %s)", unmet, healProbe(ctx, c, cut))
		return nil
	}
	t.Notef("every link established again %s after the heal", time.Since(tHeal).Round(100*time.Millisecond))
	// No one writes the keys again: once nothing is in flight, a key
	// missing stays missing.
	at, settled := c.SpreadSettled(ctx, cluster.DefaultTable, all, judge.HealTimeout)
	last := latest(at)
	if len(at) < len(all) {
		f.Settled = settled
		f.StillMissing = obs.Opt(obs.From(cluster.Missing(ctx, c.Members, cluster.DefaultTable, all)))
	} else {
		ev.Reconverged, ev.ReconvergeMs = true, last.Sub(tHeal).Milliseconds()
		t.Notef("reconverged %s after the heal: all %d keys on every node", last.Sub(tHeal).Round(10*time.Millisecond), len(all))
	}
	clusterdoctor.Show(ctx, c, t, "harp doctor after the heal")
	return nil
}

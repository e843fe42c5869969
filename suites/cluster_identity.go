package suites

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/harp-project/harp/harness/cluster"
	"github.com/harp-project/harp/harness/scenario"
	"github.com/harp-project/harp/harness/verdict"
)

// ClusterIdentity: an instance's local peer name comes from -L, else from
// localpeer, else from its host name (doc/configuration.txt, "peers"). When
// it matches no peer line, the instance has no local peer in the section:
// it neither listens nor syncs, and the rest of the cluster cannot reach it.
// harp's doctor must say so plainly.
var ClusterIdentity = scenario.Register(&scenario.Scenario{
	ID:       "cluster-identity",
	Upstream: "peers replication conformance: local peer identity",
	Title:    "A node whose local peer name matches no peer line does not sync, and is diagnosed as such",
	Owner:    "area:peers-cluster",
	Labels:   []string{"issue:cluster-identity", "area:peers-cluster"},
	Trials:   3,
	Noun:     "identities",
	Steps: []string{
		"Setup, one cluster per trial: 3 nodes with peer lines node1..node3; node3 takes the name `ghost` by `localpeer ghost` (trial 1), by `-L ghost` (trial 2), or by its host name `ghost` with neither (trial 3).",
		"Control: node1 and node2 mesh, and 10 keys set on node1 reach node2.",
		"Expectation: none of the keys reaches node3 within 3 s after node2 has them all, and harp's doctor names node3's identity as the cause.",
	},
	Run: runIdentity,
})

var identities = []cluster.Identity{cluster.ByLocalpeer, cluster.ByFlag, cluster.ByHostname}

func runIdentity(ctx context.Context, env *scenario.Env) verdict.Outcome {
	var out verdict.Outcome
	for r := 1; r <= env.Trials && ctx.Err() == nil; r++ {
		how := identities[(r-1)%len(identities)]
		size, err := clusterSize()
		if err != nil {
			return verdict.Outcome{Trials: out.Trials, Err: err}
		}
		nodes := cluster.Nodes(size)
		nodes[size-1].Identity, nodes[size-1].As = how, "ghost"
		c, o, ok := startCluster(ctx, env, cluster.Options{Nodes: nodes}, false)
		if !ok {
			o.Trials = out.Trials
			return o
		}
		t, err := identityTrial(ctx, c, r, how)
		c.Stop(context.WithoutCancel(ctx))
		out.Trials = append(out.Trials, t)
		if err != nil {
			out.Err = err
			return out
		}
		env.Logf("cluster-identity on %s: %s: %s", env.Image.Name, how, trialSummary(t))
	}
	return out
}

func identityTrial(ctx context.Context, c *cluster.Cluster, r int, how cluster.Identity) (t verdict.Trial, err error) {
	t.N, t.Evidence = r, map[string]any{"identity_by": string(how)}
	mk, t0 := mark(c), time.Now()
	defer func() { t.Exchanges, t.Duration = mk.exchanges(), time.Since(t0) }()
	a, ghost := c.Members[0], c.Members[len(c.Members)-1]
	t.Notes = append(t.Notes, fmt.Sprintf("%s takes its name from %s: ghost", ghost.Name, how))
	ks := keys(fmt.Sprintf("i%d-", r), 10)
	if err := setKeys(ctx, a, clusterTable, ks, "data.gpc0 1"); err != nil {
		return t, err
	}
	// Control: the well-named nodes replicate.
	if seen := spread(ctx, c.Members[:len(c.Members)-1], clusterTable, ks, meshTimeout); len(seen) < len(ks) {
		t.Unmet = fmt.Sprintf("control failed: only %d of %d keys set on %s reached every other well-named node within %s", len(seen), len(ks), a.Name, meshTimeout)
		return t, nil
	}
	if err := sleep(ctx, 3*time.Second); err != nil { // a bounded window in which a key must NOT arrive: nothing to poll for
		return t, err
	}
	tb, err := tableOf(ctx, ghost, clusterTable)
	if err != nil {
		return t, err
	}
	got := 0
	for _, k := range ks {
		if _, ok := tb.Lookup(k); ok {
			got++
		}
	}
	t.Evidence["keys_on_ghost"] = got
	d, err := diagnose(ctx, c)
	if err != nil {
		return t, err
	}
	t.Blocks = append(t.Blocks, doctorBlock("harp doctor", d))
	t.Evidence["doctor_codes"] = codes(d)
	named := false
	for _, f := range d.Findings {
		if f.Code == "identity" && strings.HasPrefix(f.Message, ghost.Name+":") {
			named = true
		}
	}
	t.Evidence["doctor_named_identity"] = named
	switch {
	case got > 0:
		t.Violation = fmt.Sprintf("%d of %d keys reached %s although its local peer name (ghost, by %s) matches no peer line", got, len(ks), ghost.Name, how)
	case !named:
		// harp's own failure, not HAProxy's: an error, never REPRODUCED.
		return t, fmt.Errorf("%s did not sync, but harp's doctor did not name its identity (likely cause given: %q)", ghost.Name, d.Cause)
	default:
		t.Notes = append(t.Notes, ghost.Name+" holds none of the keys; doctor: "+d.Cause)
	}
	return t, nil
}

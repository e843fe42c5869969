// Package identity: an instance's local peer name comes from -L, else from
// localpeer, else from its host name (doc/configuration.txt, "peers"). When
// it matches no peer line, the instance has no local peer in the section:
// it neither listens nor syncs, and the rest of the cluster cannot reach it.
// harp's doctor must say so plainly.
package identity

import (
	"context"
	"fmt"
	"time"

	"github.com/harp-project/harp/harness/cluster"
	"github.com/harp-project/harp/harness/doctor"
	"github.com/harp-project/harp/harness/scenario"
	"github.com/harp-project/harp/harness/verdict"
)

var Suite = scenario.Register(&scenario.Scenario{
	ID:       "cluster-identity",
	Upstream: "peers replication conformance: local peer identity",
	Title:    "A node whose local peer name matches no peer line does not sync, and is diagnosed as such",
	Summary:  "the last node takes the name `ghost` by localpeer, -L or its host name: it never receives the keys, and the doctor names its identity",
	Labels:   []string{"area:peers-cluster"},
	Trials:   3,
	Noun:     "identities",
	Params:   []scenario.Param{scenario.NodesParam},
	StepsFor: func(p scenario.Values) []string {
		n := p.Int("NODES")
		return []string{
			fmt.Sprintf("Setup, one cluster per trial: %d nodes with peer lines node1..node%d; node%d takes the name `ghost` by `localpeer ghost` (trial 1), by `-L ghost` (trial 2), or by its host name `ghost` with neither (trial 3).", n, n, n),
			"Control: the other nodes mesh, and 10 keys set on node1 reach every one of them.",
			fmt.Sprintf("Expectation: none of the keys reaches node%d within 3 s after the others have them all, and harp's doctor names node%d's identity as the cause.", n, n),
		}
	},
	Run: run,
})

var identities = []cluster.Identity{cluster.ByLocalpeer, cluster.ByFlag, cluster.ByHostname}

// Evidence is what one identity trial recorded.
type Evidence struct {
	IdentityBy          cluster.Identity `json:"identity_by"`
	KeysOnGhost         int              `json:"keys_on_ghost"`
	DoctorNamedIdentity bool             `json:"doctor_named_identity"`
	DoctorCodes         []doctor.Code    `json:"doctor_codes,omitempty"`
}

func run(ctx context.Context, env *scenario.Env) verdict.Outcome {
	return env.RunTrials(ctx, func(ctx context.Context, t *scenario.Trial) error {
		how := identities[(t.N-1)%len(identities)]
		nodes := cluster.Nodes(env.Nodes())
		nodes[len(nodes)-1].Identity, nodes[len(nodes)-1].As = how, "ghost"
		c, unmet, err := env.StartCluster(ctx, cluster.Options{Nodes: nodes}, false)
		if c == nil {
			t.Unmet = unmet
			return err
		}
		defer c.Stop(context.WithoutCancel(ctx)) // one cluster per trial
		return trial(ctx, c, t, how)
	})
}

func trial(ctx context.Context, c *cluster.Cluster, t *scenario.Trial, how cluster.Identity) error {
	ev := &Evidence{IdentityBy: how}
	t.Evidence = ev
	a, ghost := c.Members[0], c.Members[len(c.Members)-1]
	t.Notef("%s takes its name from %s: ghost", ghost.Name, how)
	ks := cluster.Keys(fmt.Sprintf("i%d-", t.N), 10)
	if err := a.SetKeys(ctx, cluster.DefaultTable, ks, "data.gpc0 1"); err != nil {
		return err
	}
	// Control: the well-named nodes replicate.
	if seen := cluster.Spread(ctx, c.Members[:len(c.Members)-1], cluster.DefaultTable, ks, cluster.MeshTimeout); len(seen) < len(ks) {
		t.Unmet = fmt.Sprintf("control failed: only %d of %d keys set on %s reached every other well-named node within %s", len(seen), len(ks), a.Name, cluster.MeshTimeout)
		return nil
	}
	// A bounded window in which a key must NOT arrive: nothing to poll for.
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(3 * time.Second):
	}
	tb, err := ghost.Table(ctx, cluster.DefaultTable)
	if err != nil {
		return err
	}
	for _, k := range ks {
		if _, ok := tb.Lookup(k); ok {
			ev.KeysOnGhost++
		}
	}
	d, err := c.Diagnose(ctx)
	if err != nil {
		return err
	}
	t.Show("harp doctor", d.Text())
	for _, f := range d.Findings {
		ev.DoctorCodes = append(ev.DoctorCodes, f.Code)
	}
	_, ev.DoctorNamedIdentity = d.Find(doctor.Identity, ghost.Name, "")
	switch {
	case ev.KeysOnGhost > 0:
		t.Violation = fmt.Sprintf("%d of %d keys reached %s although its local peer name (ghost, by %s) matches no peer line", ev.KeysOnGhost, len(ks), ghost.Name, how)
	case !ev.DoctorNamedIdentity:
		// harp's own failure, not HAProxy's: an error, never REPRODUCED.
		return fmt.Errorf("%s did not sync, but harp's doctor did not name its identity (likely cause given: %q)", ghost.Name, d.Cause)
	default:
		t.Notef("%s holds none of the keys; doctor: %s", ghost.Name, d.Cause)
	}
	return nil
}

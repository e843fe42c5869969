// Package identity: an instance's local peer name comes from -L, else from
// localpeer, else from its host name (doc/configuration.txt, "peers"). When
// it matches no peer line, the instance has no local peer in the section:
// it neither listens nor syncs, and the rest of the cluster cannot reach it.
// harp's doctor must say so plainly.
package identity

import (
	"context"
	"fmt"

	"github.com/harp-project/harp/harness/core/cliout"
	"github.com/harp-project/harp/harness/core/obs"
	"github.com/harp-project/harp/harness/core/suite"
	"github.com/harp-project/harp/harness/core/verdict"
	"github.com/harp-project/harp/harness/live/cluster"
	"github.com/harp-project/harp/harness/live/node"
	"github.com/harp-project/harp/harness/live/suiteenv"
	"github.com/harp-project/harp/harness/ops/clusterdoctor"
	"github.com/harp-project/harp/harness/ops/doctor"
	"github.com/harp-project/harp/suites/cluster/identity/judge"
)

var Suite = suite.Register(&suite.Suite{
	ID:       "cluster-identity",
	Upstream: "peers replication conformance: local peer identity",
	Title:    "A node whose local peer name matches no peer line does not sync, and is diagnosed as such",
	Summary:  "the last node takes the name `ghost` by localpeer, -L or its host name: it never receives the keys, and the doctor names its identity",
	Labels:   []string{"area:peers-cluster"},
	Trials:   3,
	Noun:     "identities",
	Params:   []suite.Param{suite.NodesParam},
	StepsFor: func(p suite.Values) []string {
		n := p.Int("NODES")
		return []string{
			fmt.Sprintf("Setup, one cluster per trial: %d nodes with peer lines node1..node%d; node%d takes the name `ghost` by `localpeer ghost` (trial 1), by `-L ghost` (trial 2), or by its host name `ghost` with neither (trial 3).", n, n, n),
			fmt.Sprintf("Controls: before the trials, with every name right, 10 keys set on node1 are seen on node%d; in each trial the other nodes mesh and the keys reach every one of them.", n),
			fmt.Sprintf("Expectation: node%d holds none of the keys, and harp's doctor names its identity as the cause. Absence counts only when node%d cannot sync by construction (HAProxy removed its section, or it has no local peer and no link up); else the trial is inconclusive.", n, n),
		}
	},
	Run: run,
})

var identities = []cluster.Identity{cluster.ByLocalpeer, cluster.ByFlag, cluster.ByHostname}

// Evidence is what one identity trial recorded.
type Evidence struct {
	IdentityBy          cluster.Identity `json:"identity_by"`
	DoctorNamedIdentity bool             `json:"doctor_named_identity"`
	DoctorCodes         []doctor.Code    `json:"doctor_codes,omitempty"`
	Facts               judge.Facts      `json:"facts"`
}

func run(ctx context.Context, env *suiteenv.Env) verdict.Outcome {
	// The check must be able to see keys arrive: with every name right,
	// the keys reach the last node through the same reads.
	if unmet, err := control(ctx, env); err != nil || unmet != "" {
		return verdict.Outcome{Unmet: unmet, Err: err}
	}
	return env.RunTrials(ctx, func(ctx context.Context, t *verdict.Trial) error {
		how := identities[(t.N-1)%len(identities)]
		nodes := cluster.Nodes(env.Nodes())
		nodes[len(nodes)-1].Identity, nodes[len(nodes)-1].As = how, "ghost"
		c, unmet, err := env.StartCluster(ctx, cluster.Options{Nodes: nodes}, false)
		if c == nil {
			t.Unmet = unmet
			return err
		}
		defer env.StopCluster(ctx, c) // one cluster per trial, its crashes read first
		return trial(ctx, c, t, how)
	})
}

// control starts the cluster with every name right and checks that keys
// set on node1 are seen on the last node.
func control(ctx context.Context, env *suiteenv.Env) (unmet string, err error) {
	c, unmet, err := env.StartCluster(ctx, cluster.Options{}, true)
	if c == nil {
		return "control (every name right): " + unmet, err
	}
	defer env.StopCluster(ctx, c)
	ks := cluster.Keys("control-", 10)
	if err := c.Members[0].SetKeys(ctx, cluster.DefaultTable, ks, "data.gpc0 1"); err != nil {
		return "", err
	}
	last := c.Members[len(c.Members)-1]
	if seen := cluster.Spread(ctx, []*cluster.Member{last}, cluster.DefaultTable, ks, cluster.MeshTimeout); len(seen) < len(ks) {
		return fmt.Sprintf("control failed: with every name right, only %d of %d keys set on node1 were seen on %s", len(seen), len(ks), last.Name), nil
	}
	return "", nil
}

func trial(ctx context.Context, c *cluster.Cluster, t *verdict.Trial, how cluster.Identity) error {
	ev := &Evidence{IdentityBy: how}
	t.Evidence = ev
	a, ghost := c.Members[0], c.Members[len(c.Members)-1]
	f := &ev.Facts
	f.How, f.Ghost = string(how), ghost.Name
	defer func() { t.Violation, t.Unmet = judge.Trial(*f) }()
	t.Notef("%s takes its name from %s: ghost", ghost.Name, how)
	ks := cluster.Keys(fmt.Sprintf("i%d-", t.N), 10)
	f.Keys = len(ks)
	if err := a.SetKeys(ctx, cluster.DefaultTable, ks, "data.gpc0 1"); err != nil {
		return err
	}
	if seen := cluster.Spread(ctx, c.Members[:len(c.Members)-1], cluster.DefaultTable, ks, cluster.MeshTimeout); len(seen) < len(ks) {
		f.Control = fmt.Sprintf("control failed: only %d of %d keys set on %s reached every other well-named node within %s", len(seen), len(ks), a.Name, cluster.MeshTimeout)
		return nil
	}
	f.Peering = obs.Opt(peering(ctx, c, ghost))
	if p, seen := f.Peering.Get(); !seen || (p.Local != "" && p.Local != "ghost") {
		return nil
	} else if p.CanSync { // keys may still arrive: a positive arrival ends the wait early
		f.KeysOnGhost = obs.Opt(obs.Value(len(cluster.Spread(ctx, []*cluster.Member{ghost}, cluster.DefaultTable, ks, cluster.MeshTimeout))))
	} else { // read once: a table that cannot be read is unknown, never an absence
		f.KeysOnGhost = obs.Opt(ghost.Holds(ctx, cluster.DefaultTable, ks))
	}
	keys, seen := f.KeysOnGhost.Get()
	d, err := clusterdoctor.Show(ctx, c, t, "harp doctor")
	if err != nil {
		return err
	}
	ev.DoctorCodes = d.Codes()
	if _, ev.DoctorNamedIdentity = d.Find(doctor.Identity, ghost.Name, ""); !ev.DoctorNamedIdentity && seen && keys == 0 {
		// harp's own failure, not HAProxy's: an error, never REPRODUCED.
		return fmt.Errorf("%s did not sync, but harp's doctor did not name its identity (likely cause given: %q)", ghost.Name, d.Cause)
	}
	t.Notef("%s holds %d of the keys; doctor: %s", ghost.Name, keys, d.Cause)
	return nil
}

// peering reads how a member runs the section.
func peering(ctx context.Context, c *cluster.Cluster, m *cluster.Member) obs.Of[judge.Peering] {
	secs, err := m.Node.Peers(ctx, node.StatsSocket)
	if err != nil {
		return obs.From(judge.Peering{}, err)
	}
	s, _ := cliout.FindSection(secs, c.Section) // none: no local peer either
	p, ok := s.Local()
	if !ok {
		return obs.Value(judge.Peering{})
	}
	for _, r := range s.Peers {
		if !r.Local && r.Established() {
			return obs.Value(judge.Peering{Local: p.Name, CanSync: true})
		}
	}
	return obs.Value(judge.Peering{Local: p.Name})
}

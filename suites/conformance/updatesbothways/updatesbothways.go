// Package updatesbothways: a key written on node A and learned by node B,
// then updated on B, reaches A with B's value. The update may come from
// the CLI or from traffic, on a B that just learnt the key, that was
// reloaded since (its new worker was taught the key by the old one), or
// that started afresh and resynced from A.
package updatesbothways

import (
	"context"
	"fmt"
	"time"

	"github.com/harp-project/harp/harness/core/obs"
	"github.com/harp-project/harp/harness/core/suite"
	"github.com/harp-project/harp/harness/core/verdict"
	"github.com/harp-project/harp/harness/live/cluster"
	"github.com/harp-project/harp/harness/live/suiteenv"
	"github.com/harp-project/harp/suites/conformance/updatesbothways/judge"
)

var Suite = suite.Register(&suite.Suite{
	ID:       "conf-updates-both-ways",
	Upstream: "conformance: peers replicate updates in both directions",
	Title:    "An entry learnt from a peer and updated locally is pushed back to that peer",
	Summary:  "two nodes: a key written on A, learnt by B, updated on B (CLI or traffic; also after B reloaded and after B resynced from A) reaches A within BOUND",
	Labels:   []string{"area:conformance", "area:peers"},
	Trials:   len(Kinds),
	Noun:     "updates",
	Params:   []suite.Param{suite.Duration("BOUND", 10*time.Second, "how long an update may take to reach the other node (observed: 0.5 to 4 ms; a link that drops on a loaded machine is back by HAProxy's 5 s reconnect)")},
	StepsFor: func(p suite.Values) []string {
		return []string{
			"Setup: two nodes A (node1) and B (node2) on a private network, one peers section naming both, table `tbl` (type string len 32, expire 1h, store gpc0,http_req_cnt); the HTTP frontend tracks the x-key header in sc0 and runs `http-request sc-inc-gpc0(0)`. Wait until both links are established and both initial resyncs finished.",
			"Kinds, one per trial (TRIALS=8 runs each twice): " + suiteenv.List(Kinds, func(k Kind) string { return k.Name }, ", ") + ". Each trial uses a key of its own.",
			fmt.Sprintf("Write on A: `set table cluster/tbl key K data.gpc0 1` (CLI kinds) or one request with `x-key: K` (traffic: gpc0 becomes 1); B must hold K with gpc0 1 within %s. Then, for the reload kind, SIGUSR2 to B's master; for the resync kind, B restarted afresh; both wait until the links are up again and B still holds K with gpc0 1.", p.Duration("BOUND")),
			"Trigger: B updates K: `set table ... data.gpc0 2` (CLI) or one request with `x-key: K` to B (traffic: gpc0 becomes 2).",
			fmt.Sprintf("Expectation: A holds K with gpc0 2 within %s of B's update, and B still holds 2.", p.Duration("BOUND")),
		}
	},
	Run:       run,
	NoRegTest: "two nodes replicating a key both ways within BOUND: VTest has no poll until replication settles",
})

// Kind is one variant of the update.
type Kind struct {
	ID      string // its checks' qualifier: pushed-back.reload
	Name    string
	Traffic bool   // write and update by HTTP requests, not the CLI
	Before  string // what happens to B before its update: "", "reload", "restart"
}

// Kinds in trial order.
var Kinds = []Kind{
	{ID: "cli", Name: "updated by the CLI"},
	{ID: "traffic", Name: "updated by traffic", Traffic: true},
	{ID: "reload", Name: "updated after B was reloaded", Before: "reload"},
	{ID: "restart", Name: "updated after B resynced from A", Before: "restart"},
}

// Evidence is what one update recorded.
type Evidence struct {
	Kind  string      `json:"kind"`
	Facts judge.Facts `json:"facts"`
}

func run(ctx context.Context, env *suiteenv.Env) verdict.Outcome {
	c, unmet, err := env.StartCluster(ctx, cluster.Options{Nodes: cluster.Nodes(2), HTTPRules: []string{"sc-inc-gpc0(0)"}}, true)
	if c == nil {
		return verdict.Outcome{Unmet: unmet, Err: err}
	}
	return env.RunTrials(ctx, func(ctx context.Context, t *verdict.Trial) error {
		return trial(ctx, c, t, Kinds[(t.N-1)%len(Kinds)], env.Params.Duration("BOUND"))
	})
}

func trial(ctx context.Context, c *cluster.Cluster, t *verdict.Trial, k Kind, bound time.Duration) error {
	a, b := c.Members[0], c.Members[1]
	ev := &Evidence{Kind: k.Name, Facts: judge.Facts{Kind: k.Name, KindID: k.ID, Bound: bound, Before: k.Before}}
	t.Evidence = ev
	f := &ev.Facts
	defer func() { t.Checks, t.Violation, t.Unmet = judge.Update(*f) }()
	key := fmt.Sprintf("both-%03d", t.N)
	if f.MeshBefore = c.WaitMesh(ctx, cluster.MeshTimeout); f.MeshBefore != "" {
		return nil
	}
	if err := write(ctx, a, k, key, "1"); err != nil {
		f.WriteErr = "writing on A: " + err.Error()
		return nil
	}
	f.Learned.Of, f.LearnedIn = b.WaitData(ctx, cluster.DefaultTable, key, "gpc0", "1", bound)
	t.Notef("%s: B holds %s gpc0=%s %s after A's write", k.Name, key, obs.Text(f.Learned.Of, nil), f.LearnedIn.Round(time.Millisecond))
	if v, _ := f.Learned.Get(); v != "1" {
		return nil
	}
	switch k.Before {
	case "reload":
		if r, err := b.Node.Reload(ctx, 20*time.Second); err != nil {
			f.BeforeErr = "reloading B: " + err.Error()
		} else {
			t.Notef("B reloaded: new worker %d", r.NewPID)
		}
	case "restart":
		if err := c.Restart(ctx, b, 30*time.Second); err != nil {
			f.BeforeErr = "restarting B: " + err.Error()
		} else {
			t.Notef("B restarted afresh")
		}
	}
	if k.Before != "" && f.BeforeErr == "" {
		if f.BeforeErr = c.WaitMesh(ctx, cluster.MeshTimeout); f.BeforeErr == "" {
			f.Kept.Of, _ = b.WaitData(ctx, cluster.DefaultTable, key, "gpc0", "1", bound)
		}
	}
	if v, _ := f.Kept.Get(); f.BeforeErr != "" || (k.Before != "" && v != "1") {
		return nil
	}
	if err := write(ctx, b, k, key, "2"); err != nil {
		f.WriteErr = "updating on B: " + err.Error()
		return nil
	}
	f.OnA.Of, f.Latency = a.WaitData(ctx, cluster.DefaultTable, key, "gpc0", "2", bound) // from the moment B answered
	f.OnB.Of, _ = b.WaitData(ctx, cluster.DefaultTable, key, "gpc0", "2", 0)
	t.Notef("%s: after B's update, A holds gpc0=%s (%s after the update), B holds gpc0=%s", k.Name, obs.Text(f.OnA.Of, nil), f.Latency.Round(time.Millisecond), obs.Text(f.OnB.Of, nil))
	return nil
}

// write sets the key's gpc0 on a member: by the CLI, or by one request
// whose sc-inc-gpc0 takes it from want-1 to want.
func write(ctx context.Context, m *cluster.Member, k Kind, key, want string) error {
	if k.Traffic {
		return m.HTTPKeys(ctx, []string{key}, 1)
	}
	return m.SetEntry(ctx, cluster.DefaultTable, key, "data.gpc0 "+want)
}

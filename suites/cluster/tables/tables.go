// Package tables: peers exchange a table by name, after a table definition
// message that carries its key type, key length and stored data types
// (doc/peers-v2.0.txt). A receiver whose table of that name has another
// key type cannot apply the updates; data types it does not store are
// dropped. What is and is not exchanged is recorded; harp's doctor must
// name the differing definition.
package tables

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/harp-project/harp/harness/cluster"
	"github.com/harp-project/harp/harness/doctor"
	"github.com/harp-project/harp/harness/scenario"
	"github.com/harp-project/harp/harness/verdict"
)

var Suite = scenario.Register(&scenario.Scenario{
	ID:       "cluster-tables",
	Upstream: "peers replication conformance: mismatched table definitions",
	Title:    "Tables defined differently on one node: what is and is not exchanged",
	Summary:  "same table name, other key type (or fewer stored data types) on the last node: the identical table converges, the other key type is never applied, the doctor names it; what is exchanged is recorded",
	Labels:   []string{"area:peers-cluster"},
	Trials:   1,
	Noun:     "runs",
	Params:   []scenario.Param{scenario.NodesParam},
	StepsFor: func(p scenario.Values) []string {
		odd := fmt.Sprintf("node%d", p.Int("NODES"))
		return []string{
			fmt.Sprintf("Setup: %d nodes; tables `tbl` (string len 32, gpc0,http_req_cnt) identical everywhere; `keytype` string len 32 on the others but type ip on %s; `store` storing gpc0,http_req_cnt on the others but only gpc0 on %s. Wait until every link is established.", p.Int("NODES"), odd, odd),
			"Trigger: on node1, set 10 keys in each table with gpc0 1 and http_req_cnt 5 (keytype keys are IPv4 addresses, valid in both key types).",
			fmt.Sprintf("Expectation: `tbl` converges on every node; %s never holds a `keytype` key; harp's doctor names the `keytype` definition. Recorded: what %s got in `keytype` and `store`, and which data came with it.", odd, odd),
		}
	},
	Run: run,
})

// Evidence is what the odd node received.
type Evidence struct {
	KeytypeOnOddNode      int  `json:"keytype_on_odd_node"`
	StoreOnOddNode        int  `json:"store_on_odd_node"`
	DoctorNamedDefinition bool `json:"doctor_named_definition"`
}

func run(ctx context.Context, env *scenario.Env) verdict.Outcome {
	same := cluster.Table{Name: "tbl", Type: "string len 32", Store: "gpc0,http_req_cnt"}
	nodes := cluster.Nodes(env.Nodes())
	nodes[len(nodes)-1].Tables = []cluster.Table{same,
		{Name: "keytype", Type: "ip", Store: "gpc0,http_req_cnt"},
		{Name: "store", Type: "string len 32", Store: "gpc0"}}
	c, unmet, err := env.StartCluster(ctx, cluster.Options{Nodes: nodes, Tables: []cluster.Table{same,
		{Name: "keytype", Type: "string len 32", Store: "gpc0,http_req_cnt"},
		{Name: "store", Type: "string len 32", Store: "gpc0,http_req_cnt"}}}, true)
	if c == nil {
		return verdict.Outcome{Unmet: unmet, Err: err}
	}
	return env.RunTrials(ctx, func(ctx context.Context, t *scenario.Trial) error { return trial(ctx, c, t) })
}

func trial(ctx context.Context, c *cluster.Cluster, t *scenario.Trial) error {
	ev := &Evidence{}
	t.Evidence = ev
	a, odd, others := c.Members[0], c.Members[len(c.Members)-1], c.Members[:len(c.Members)-1]
	ks := map[string][]string{}
	for _, name := range []string{"tbl", "keytype", "store"} {
		for i := range 10 {
			k := fmt.Sprintf("t%d-%s-%02d", t.N, name, i)
			if name == "keytype" {
				k = fmt.Sprintf("192.0.2.%d", 10*t.N+i) // an address: a valid key for both key types
			}
			ks[name] = append(ks[name], k)
		}
		if err := a.SetKeys(ctx, "cluster/"+name, ks[name], "data.gpc0 1 data.http_req_cnt 5"); err != nil {
			return err
		}
	}
	// The identical table converges.
	if seen := cluster.Spread(ctx, c.Members, cluster.DefaultTable, ks["tbl"], cluster.ConvergeTimeout); len(seen) < len(ks["tbl"]) {
		t.Violation = fmt.Sprintf("the identical table %s: only %d of %d keys on every node", cluster.DefaultTable, len(seen), len(ks["tbl"]))
	}
	// The control: the nodes defined as node1 show the others were sent.
	for _, name := range []string{"keytype", "store"} {
		if seen := cluster.Spread(ctx, others, "cluster/"+name, ks[name], cluster.ConvergeTimeout); len(seen) < len(ks[name]) {
			t.Unmet = fmt.Sprintf("control failed: only %d of %d keys of cluster/%s reached every node defined as %s", len(seen), len(ks[name]), name, a.Name)
			return nil
		}
	}
	// A bounded window for the odd node to receive what it will: nothing to poll for.
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(2 * time.Second):
	}
	for _, name := range []string{"keytype", "store"} {
		got, fields, err := received(ctx, odd, "cluster/"+name, ks[name])
		if err != nil {
			return err
		}
		t.Notef("cluster/%s: %s holds %d of %d keys written on %s (data seen: %s)", name, odd.Name, got, len(ks[name]), a.Name, fields)
		if name == "keytype" {
			ev.KeytypeOnOddNode = got
		} else {
			ev.StoreOnOddNode = got
		}
	}
	if ev.KeytypeOnOddNode > 0 && t.Violation == "" {
		t.Violation = fmt.Sprintf("%s applied %d updates of cluster/keytype although its key type (ip) differs from the sender's (string)", odd.Name, ev.KeytypeOnOddNode)
	}
	d, err := c.Diagnose(ctx)
	if err != nil {
		return err
	}
	t.Show("harp doctor", d.Text())
	if _, ev.DoctorNamedDefinition = d.Find(doctor.TableDefinition, "", "cluster/keytype"); !ev.DoctorNamedDefinition {
		// harp's own failure, not HAProxy's: an error, never REPRODUCED.
		return fmt.Errorf("harp's doctor did not name the differing definition of cluster/keytype (likely cause given: %q)", d.Cause)
	}
	return nil
}

// received counts the keys a member holds and the non-zero data with them.
func received(ctx context.Context, m *cluster.Member, table string, ks []string) (int, string, error) {
	tb, err := m.Table(ctx, table)
	if err != nil {
		return 0, "", err
	}
	got, fields := 0, map[string]bool{}
	for _, k := range ks {
		if e, ok := tb.Lookup(k); ok {
			got++
			for f, v := range e.Data {
				if v != "0" {
					fields[f+"="+v] = true
				}
			}
		}
	}
	var fl []string
	for f := range fields {
		fl = append(fl, f)
	}
	sort.Strings(fl)
	if len(fl) == 0 {
		return got, "none", nil
	}
	return got, strings.Join(fl, " "), nil
}

package suites

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/harp-project/harp/harness/cluster"
	"github.com/harp-project/harp/harness/scenario"
	"github.com/harp-project/harp/harness/verdict"
)

// ClusterTables: peers exchange a table by name, after a table definition
// message that carries its key type, key length and stored data types
// (doc/peers-v2.0.txt). A receiver whose table of that name has another
// key type cannot apply the updates; data types it does not store are
// dropped. What is and is not exchanged is recorded; harp's doctor must
// name the differing definition.
var ClusterTables = scenario.Register(&scenario.Scenario{
	ID:       "cluster-tables",
	Upstream: "peers replication conformance: mismatched table definitions",
	Title:    "Tables defined differently on one node: what is and is not exchanged",
	Owner:    "area:peers-cluster",
	Labels:   []string{"issue:cluster-tables", "area:peers-cluster"},
	Trials:   1,
	Noun:     "runs",
	Steps: []string{
		"Setup: 3 nodes; tables `tbl` (string len 32, gpc0,http_req_cnt) identical everywhere; `keytype` string len 32 on node1/node2 but type ip on node3; `store` storing gpc0,http_req_cnt on node1/node2 but only gpc0 on node3. Wait until every link is established.",
		"Trigger: on node1, set 10 keys in each table with gpc0 1 and http_req_cnt 5 (keytype keys are IPv4 addresses, valid in both key types).",
		"Expectation: `tbl` converges on every node; node3 never holds a `keytype` key; harp's doctor names the `keytype` definition. Recorded: what node3 got in `keytype` and `store`, and which data came with it.",
	},
	Run: runTables,
})

func runTables(ctx context.Context, env *scenario.Env) verdict.Outcome {
	same := cluster.Table{Name: "tbl", Type: "string len 32", Store: "gpc0,http_req_cnt"}
	size, err := clusterSize()
	if err != nil {
		return verdict.Outcome{Err: err}
	}
	nodes := cluster.Nodes(size)
	nodes[size-1].Tables = []cluster.Table{same,
		{Name: "keytype", Type: "ip", Store: "gpc0,http_req_cnt"},
		{Name: "store", Type: "string len 32", Store: "gpc0"}}
	c, out, ok := startCluster(ctx, env, cluster.Options{Nodes: nodes, Tables: []cluster.Table{same,
		{Name: "keytype", Type: "string len 32", Store: "gpc0,http_req_cnt"},
		{Name: "store", Type: "string len 32", Store: "gpc0,http_req_cnt"}}}, true)
	if !ok {
		return out
	}
	defer c.Stop(context.WithoutCancel(ctx))
	return rounds(ctx, env, "cluster-tables", "run", out, func(r int) (verdict.Trial, error) { return tablesTrial(ctx, c, r) })
}

func tablesTrial(ctx context.Context, c *cluster.Cluster, r int) (t verdict.Trial, err error) {
	t.N, t.Evidence = r, map[string]any{}
	mk, t0 := mark(c), time.Now()
	defer func() { t.Exchanges, t.Duration = mk.exchanges(), time.Since(t0) }()
	a, odd, others := c.Members[0], c.Members[len(c.Members)-1], c.Members[:len(c.Members)-1]
	ks := map[string][]string{}
	for _, name := range []string{"tbl", "keytype", "store"} {
		for i := range 10 {
			k := fmt.Sprintf("t%d-%s-%02d", r, name, i)
			if name == "keytype" {
				k = fmt.Sprintf("192.0.2.%d", 10*r+i) // an address: a valid key for both key types
			}
			ks[name] = append(ks[name], k)
		}
		if err := setKeys(ctx, a, "cluster/"+name, ks[name], "data.gpc0 1 data.http_req_cnt 5"); err != nil {
			return t, err
		}
	}
	// The identical table converges: the control.
	if seen := spread(ctx, c.Members, clusterTable, ks["tbl"], convergeTimeout); len(seen) < len(ks["tbl"]) {
		t.Violation = fmt.Sprintf("the identical table %s: only %d of %d keys on every node", clusterTable, len(seen), len(ks["tbl"]))
	}
	// The others: node2 (same definitions as node1) shows they were sent.
	for _, name := range []string{"keytype", "store"} {
		if seen := spread(ctx, others, "cluster/"+name, ks[name], convergeTimeout); len(seen) < len(ks[name]) {
			t.Unmet = fmt.Sprintf("control failed: only %d of %d keys of cluster/%s reached every node defined as %s", len(seen), len(ks[name]), name, a.Name)
			return t, nil
		}
	}
	if err := sleep(ctx, 2*time.Second); err != nil { // a bounded window for the odd node to receive what it will: nothing to poll for
		return t, err
	}
	for _, name := range []string{"keytype", "store"} {
		tb, err := tableOf(ctx, odd, "cluster/"+name)
		if err != nil {
			return t, err
		}
		got, fields := 0, map[string]bool{}
		for _, k := range ks[name] {
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
		t.Evidence[name+"_on_odd_node"] = got
		t.Notes = append(t.Notes, fmt.Sprintf("cluster/%s: %s holds %d of %d keys written on %s (data seen: %s)", name, odd.Name, got, len(ks[name]), a.Name, orNone(fl)))
		if name == "keytype" && got > 0 && t.Violation == "" {
			t.Violation = fmt.Sprintf("%s applied %d updates of cluster/keytype although its key type (ip) differs from the sender's (string)", odd.Name, got)
		}
	}
	d, err := diagnose(ctx, c)
	if err != nil {
		return t, err
	}
	t.Blocks = append(t.Blocks, doctorBlock("harp doctor", d))
	named := false
	for _, f := range d.Findings {
		if f.Code == "table-definition" && strings.Contains(f.Message, "cluster/keytype") {
			named = true
		}
	}
	t.Evidence["doctor_named_definition"] = named
	if !named {
		// harp's own failure, not HAProxy's: an error, never REPRODUCED.
		return t, fmt.Errorf("harp's doctor did not name the differing definition of cluster/keytype (likely cause given: %q)", d.Cause)
	}
	return t, nil
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	sort.Strings(s)
	return strings.Join(s, " ")
}

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

	"github.com/harp-project/harp/harness/core/obs"
	"github.com/harp-project/harp/harness/core/suite"
	"github.com/harp-project/harp/harness/core/verdict"
	"github.com/harp-project/harp/harness/live/cluster"
	"github.com/harp-project/harp/harness/live/suiteenv"
	"github.com/harp-project/harp/harness/ops/clusterdoctor"
	"github.com/harp-project/harp/harness/ops/doctor"
	"github.com/harp-project/harp/suites/cluster/tables/judge"
)

var Suite = suite.Register(&suite.Suite{
	ID:       "cluster-tables",
	Upstream: "peers replication conformance: mismatched table definitions",
	Title:    "Tables defined differently on one node: what is and is not exchanged",
	Summary:  "same table name, other key type (or fewer stored data types) on the last node: the identical table converges, the other key type is never applied, the doctor names it; what is exchanged is recorded",
	Labels:   []string{"area:peers-cluster"},
	Trials:   1,
	Noun:     "runs",
	Params:   []suite.Param{suite.NodesParam},
	StepsFor: func(p suite.Values) []string {
		odd := fmt.Sprintf("node%d", p.Int("NODES"))
		return []string{
			fmt.Sprintf("Setup: %d nodes; tables `tbl` (string len 32, gpc0,http_req_cnt) identical everywhere; `keytype` string len 32 on the others but type ip on %s; `store` storing gpc0,http_req_cnt on the others but only gpc0 on %s. Wait until every link is established.", p.Int("NODES"), odd, odd),
			fmt.Sprintf("Trigger: on node1, set 10 keys in `keytype` and `store` with gpc0 1 and http_req_cnt 5 (keytype keys are IPv4 addresses, valid in both key types); once node1's show peers says it has pushed them all to %s, set 10 keys in `tbl` (the marker).", odd),
			fmt.Sprintf("Controls: the other nodes get every table; the marker reaches every node (so what %s was sent before it has been processed).", odd),
			fmt.Sprintf("Expectation: %s holds no `keytype` key; harp's doctor names the `keytype` definition. Recorded: what %s got in `keytype` and `store`, and which data came with it.", odd, odd),
		}
	},
	Run: run,
})

// Evidence is what the odd node received.
type Evidence struct {
	DoctorNamedDefinition bool        `json:"doctor_named_definition"`
	Facts                 judge.Facts `json:"facts"`
}

func run(ctx context.Context, env *suiteenv.Env) verdict.Outcome {
	same := cluster.Table{Name: "tbl", Type: "string len 32", Store: "gpc0,http_req_cnt"}
	nodes := cluster.Nodes(env.Nodes())
	nodes[len(nodes)-1].Tables = []cluster.Table{same,
		{Name: "keytype", Type: "ip", Store: "gpc0,http_req_cnt"},
		{Name: "store", Type: "string len 32", Store: "gpc0"}}
	return env.OnCluster(ctx, cluster.Options{Nodes: nodes, Tables: []cluster.Table{same,
		{Name: "keytype", Type: "string len 32", Store: "gpc0,http_req_cnt"},
		{Name: "store", Type: "string len 32", Store: "gpc0,http_req_cnt"}}}, true, trial)
}

func trial(ctx context.Context, c *cluster.Cluster, t *verdict.Trial) error {
	ev := &Evidence{}
	t.Evidence = ev
	a, odd, others := c.Members[0], c.Members[len(c.Members)-1], c.Members[:len(c.Members)-1]
	f := &ev.Facts
	f.Odd = odd.Name
	defer func() { t.Violation, t.Unmet = judge.Exchange(*f) }()
	ks := map[string][]string{}
	for _, name := range []string{"keytype", "store", "tbl"} {
		for i := range 10 {
			k := fmt.Sprintf("t%d-%s-%02d", t.N, name, i)
			if name == "keytype" {
				k = fmt.Sprintf("192.0.2.%d", 10*t.N+i) // an address: a valid key for both key types
			}
			ks[name] = append(ks[name], k)
		}
	}
	f.Keys = len(ks["keytype"])
	for _, name := range []string{"keytype", "store"} {
		if err := a.SetKeys(ctx, "cluster/"+name, ks[name], "data.gpc0 1 data.http_req_cnt 5"); err != nil {
			return err
		}
	}
	// node1 has pushed them to the odd node: what follows on the same
	// session comes after them.
	if !pushedAll(ctx, c, a, odd.Name, cluster.ConvergeTimeout, "cluster/keytype", "cluster/store") {
		f.Control = fmt.Sprintf("control failed: %s never pushed every update of cluster/keytype and cluster/store to %s", a.Name, odd.Name)
		return nil
	}
	// The marker: the identical table's keys, written last.
	if err := a.SetKeys(ctx, cluster.DefaultTable, ks["tbl"], "data.gpc0 1 data.http_req_cnt 5"); err != nil {
		return err
	}
	for _, name := range []string{"keytype", "store"} { // the control nodes got every table
		if seen := cluster.Spread(ctx, others, "cluster/"+name, ks[name], cluster.ConvergeTimeout); len(seen) < len(ks[name]) {
			f.Control = fmt.Sprintf("control failed: only %d of %d keys of cluster/%s reached every node defined as %s", len(seen), len(ks[name]), name, a.Name)
			return nil
		}
	}
	if seen := cluster.Spread(ctx, c.Members, cluster.DefaultTable, ks["tbl"], cluster.ConvergeTimeout); len(seen) < len(ks["tbl"]) {
		f.Marker = fmt.Sprintf("the identical table %s, written last: only %d of %d keys on every node, so what %s got before cannot be judged", cluster.DefaultTable, len(seen), len(ks["tbl"]), odd.Name)
	}
	f.Keytype = obs.Opt(received(ctx, t, odd, a, "keytype", ks["keytype"]))
	f.Store = obs.Opt(received(ctx, t, odd, a, "store", ks["store"]))
	d, err := clusterdoctor.Show(ctx, c, t, "harp doctor")
	if err != nil {
		return err
	}
	if _, ev.DoctorNamedDefinition = d.Find(doctor.TableDefinition, "", "cluster/keytype"); !ev.DoctorNamedDefinition {
		// harp's own failure, not HAProxy's: an error, never REPRODUCED.
		return fmt.Errorf("harp's doctor did not name the differing definition of cluster/keytype (likely cause given: %q)", d.Cause)
	}
	return nil
}

// received counts the keys a member holds, and notes the non-zero data
// with them.
func received(ctx context.Context, t *verdict.Trial, m, from *cluster.Member, table string, ks []string) obs.Of[int] {
	tb, err := m.Table(ctx, "cluster/"+table)
	if err != nil {
		t.Notef("cluster/%s on %s could not be read: %v", table, m.Name, err)
		return obs.From(0, err)
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
	if sort.Strings(fl); len(fl) == 0 {
		fl = []string{"none"}
	}
	t.Notef("cluster/%s: %s holds %d of %d keys written on %s (data seen: %s)", table, m.Name, got, len(ks), from.Name, strings.Join(fl, " "))
	return obs.Value(got)
}

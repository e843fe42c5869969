// Package learnedentries: an entry learnt from a peer obeys the receiving
// table, not the sender's. Its expiry never exceeds the receiver's
// `expire` and it does not outlive it; a table whose key type differs is
// never applied; only the receiver's stored data types are kept; updates
// for a table the receiver lacks leave the session working for the tables
// it has. Checked between two real nodes whose definitions differ, and
// with harp's own peers client sending crafted messages.
package learnedentries

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/harp-project/harp/harness/cliout"
	"github.com/harp-project/harp/harness/cluster"
	"github.com/harp-project/harp/harness/config"
	"github.com/harp-project/harp/harness/node"
	"github.com/harp-project/harp/harness/peers"
	"github.com/harp-project/harp/harness/remotepeer"
	"github.com/harp-project/harp/harness/scenario"
	"github.com/harp-project/harp/harness/verdict"
	"github.com/harp-project/harp/suites/conformance/learnedentries/judge"
)

var Suite = scenario.Register(&scenario.Scenario{
	ID:       judge.SuiteID,
	Upstream: "conformance: a peer's entries are stored by the receiving table's rules",
	Title:    "Entries learnt from a peer obey the receiving table (expire, key type, stored types, unknown tables)",
	Summary:  "two nodes with differing table definitions, and crafted updates from harp's peers client (huge expiry, unknown table, wrong key type, data types the receiver lacks): the receiver's table rules win and the session survives",
	Labels:   []string{"area:conformance", "area:peers"},
	Trials:   len(Kinds),
	Noun:     "checks",
	Steps: []string{
		"Setup (real nodes): A (node1) and B (node2) in one peers section; tables differ: `exp` expires after 1h on A and 4s on B; `keys` is type string on A and integer on B; `types` stores gpc0,http_req_cnt on A and gpc0,gpc1 on B; `onlya` exists on A only. Wait until both links are established and both resyncs finished.",
		"Setup (crafted): one node C whose section holds its local peer and a remote peer `remote` that harp's peers client plays (handshake status 200, session established); C's table `t` is type string len 32, expire 10s, store gpc0.",
		"Kinds, one per trial (TRIALS=18 runs each twice): " + scenario.List(Kinds, func(k Kind) string { return k.Name }, ", ") + ".",
		"Expectations: B's `exp` entries have exp <= 4000 ms when learnt (at runtime and by a resync after B restarts afresh) and are gone from B within 4 s + 4 s while A keeps them (a restarted B that lacks the entry violates this only if its link to A came up within HAProxy's 5 s resync timeout, else its resync may have ended untaught: INCONCLUSIVE); B's integer `keys` table never gets A's string keys, and replication of `exp` keeps working; B's `types` entry has A's gpc0 and gpc1 0; A writing `onlya` does not stop B learning `exp`. C: a timed update with a 2^31-1 ms expiry gets exp <= 10000; an update after a definition of a table C lacks, or of `t` with an integer key, is not applied (to `t` or any table), and a correct update right after is; an update carrying gpt0, gpc0, conn_rate, http_req_cnt and gpc1 stores gpc0 exactly. After every crafted message the session is still established.",
	},
	Run: run,
})

// Kind is one check.
type Kind struct {
	Name string
	run  check
}

type check func(ctx context.Context, s *setup, t *verdict.Trial, f *judge.Facts) error

// Kinds in trial order; the first five use the two real nodes, the rest
// harp's crafted messages.
var Kinds = []Kind{
	{"expire, learnt at runtime", meshed(expireRuntime)},
	{"expire, learnt by resync", meshed(expireResync)},
	{"key type differs", meshed(keyTypeDiffers)},
	{"stored types differ", meshed(typesDiffer)},
	{"table the receiver lacks", meshed(tableMissing)},
	{"crafted: huge expiry", crafted(craftedExpiry)},
	{"crafted: unknown table", crafted(craftedUnknownTable)},
	{"crafted: wrong key type", crafted(craftedWrongKey)},
	{"crafted: data types the receiver lacks", crafted(craftedTypes)},
}

// meshed runs a check of the real nodes once they are meshed (else unmet).
func meshed(c check) check {
	return func(ctx context.Context, s *setup, t *verdict.Trial, f *judge.Facts) error {
		if !s.mesh(ctx, f) {
			return nil
		}
		return c(ctx, s, t, f)
	}
}

// crafted runs a check on an established session of harp's peer with
// nodeC (else unmet).
func crafted(c func(ctx context.Context, s *setup, t *verdict.Trial, f *judge.Facts, conn *peers.Conn) error) check {
	return func(ctx context.Context, s *setup, t *verdict.Trial, f *judge.Facts) error {
		if conn := s.session(ctx, f); conn != nil {
			return c(ctx, s, t, f, conn)
		}
		return nil
	}
}

const (
	expireB = 4 * time.Second  // B's `exp` table
	expireC = 10 * time.Second // C's `t` table
	slack   = 4 * time.Second  // expiry is checked by a task, not to the millisecond; self-tests share 2 CPUs
	bound   = 5 * time.Second  // replication between two nodes (observed: under 100 ms)
)

type setup struct {
	c     *cluster.Cluster
	cnode *node.Node
	probe *remotepeer.Probe
	conn  *peers.Conn
	// def is nodeC's definition of crafted/t as HAProxy sends it (with
	// harp's table id), read when the session starts.
	def peers.TableDef
}

func run(ctx context.Context, env *scenario.Env) verdict.Outcome {
	a := []cluster.Table{
		{Name: "exp", Type: "string len 32", Store: "gpc0", Expire: "1h"},
		{Name: "keys", Type: "string len 32", Store: "gpc0"},
		{Name: "types", Type: "string len 32", Store: "gpc0,http_req_cnt"},
		{Name: "onlya", Type: "string len 32", Store: "gpc0"},
	}
	b := []cluster.Table{
		{Name: "exp", Type: "string len 32", Store: "gpc0", Expire: "4s"},
		{Name: "keys", Type: "integer", Store: "gpc0"},
		{Name: "types", Type: "string len 32", Store: "gpc0,gpc1"},
	}
	c, unmet, err := env.StartCluster(ctx, cluster.Options{Nodes: []cluster.Spec{{Name: "node1", Tables: a}, {Name: "node2", Tables: b}}}, true)
	if c == nil {
		return verdict.Outcome{Unmet: unmet, Err: err}
	}
	s := &setup{c: c}
	cfg, err := craftedConfig()
	if err != nil {
		return verdict.Outcome{Err: err}
	}
	clusterCfg := env.Config
	if s.cnode, unmet, err = env.StartNode(ctx, node.Options{Config: cfg, Name: "nodeC", Ports: []string{"10000/tcp"}}, 1); s.cnode == nil {
		return verdict.Outcome{Unmet: unmet, Err: err}
	}
	env.Config = clusterCfg + "\n# ---- nodeC (harp's peers client plays its remote peer)\n" + cfg
	addr, err := s.cnode.Addr(ctx, "10000/tcp")
	if err != nil {
		return verdict.Outcome{Err: err}
	}
	s.probe = &remotepeer.Probe{Node: s.cnode, Addr: addr, Section: "crafted", Local: "harp", Remote: "remote"}
	if unmet := s.probe.WaitResync(ctx, 20*time.Second); unmet != "" {
		return verdict.Outcome{Unmet: "nodeC: " + unmet}
	}
	defer func() {
		if s.conn != nil {
			s.conn.Close()
		}
	}()
	return env.RunTrials(ctx, func(ctx context.Context, t *verdict.Trial) error {
		k := Kinds[(t.N-1)%len(Kinds)]
		ev := &judge.Evidence{Kind: k.Name}
		t.Evidence = ev
		ev.Facts.Kind = k.Name
		err := k.run(ctx, s, t, &ev.Facts)
		if seen := append(append([]string(nil), ev.Facts.Observed...), ev.Facts.Violations...); len(seen) > 0 {
			t.Notef("%s", strings.Join(seen, "; "))
		}
		t.Violation, t.Unmet = judge.Check(ev.Facts)
		return err
	})
}

func craftedConfig() (string, error) {
	return config.RenderText("conf-learned-entries-obey-receiver", `{{template "global" .}}

peers crafted
    peer harp 0.0.0.0:10000
    peer remote 127.0.0.1:10999
    table t type string len 32 size 1k expire 10s store gpc0
`, map[string]any{"Threads": 1, "LocalPeer": "harp"})
}

// waitFor polls until the key is in the table, for at most timeout; a
// last reading that failed is no absence: it makes the check unmet.
func waitFor(ctx context.Context, f *judge.Facts, n *node.Node, table, key string, timeout time.Duration) (cliout.Entry, bool) {
	e, ok, err := n.WaitEntry(ctx, node.StatsSocket, table, key, timeout, 20*time.Millisecond, func(_ cliout.Entry, ok bool) bool { return ok })
	if err != nil && f.Unmet == "" {
		f.Unmet = fmt.Sprintf("reading %s kept failing: %v", table, err)
	}
	return e, ok
}

// writeA writes on A; false when it could not (the check is then unmet).
func (s *setup) writeA(ctx context.Context, f *judge.Facts, table, key, data string) bool {
	if err := s.c.Members[0].Node.SetEntry(ctx, node.StatsSocket, table, key, data); err != nil {
		f.Unmet = "writing on A: " + err.Error()
		return false
	}
	return true
}

func (s *setup) ab() (a, b *cluster.Member) { return s.c.Members[0], s.c.Members[1] }

func (s *setup) mesh(ctx context.Context, f *judge.Facts) bool {
	if u := s.c.WaitMesh(ctx, cluster.MeshTimeout); u != "" {
		f.Unmet = "the two nodes are not meshed: " + u
		return false
	}
	return true
}

// checkExpiry: B's entry, once learnt, expires by B's table and leaves.
func checkExpiry(ctx context.Context, s *setup, t *verdict.Trial, f *judge.Facts, key string, learnt time.Time) {
	a, b := s.ab()
	e, ok := waitFor(ctx, f, b.Node, "cluster/exp", key, 0)
	if !ok {
		f.Violated("B dropped %s before reading its expiry", key)
		return
	}
	if time.Duration(e.Exp)*time.Millisecond > expireB {
		f.Violated("B's entry %s expires in %d ms, beyond B's table expire %s (A's is 1h)", key, e.Exp, expireB)
	} else {
		f.Held("B's entry %s expires in %d ms (B's expire %s)", key, e.Exp, expireB)
	}
	var gone time.Duration // at the last reading
	_, held, err := b.Node.WaitEntry(ctx, node.StatsSocket, "cluster/exp", key, expireB+slack+time.Since(learnt), 100*time.Millisecond, func(_ cliout.Entry, ok bool) bool {
		gone = time.Since(learnt)
		return !ok
	})
	switch {
	case err != nil:
		// The last reading failed: whether B still held it is unknown.
		f.NotRead("reading B's exp table at the end of its expiry: %v", err)
	case held:
		f.Violated("B still holds %s %s after learning it (B's expire %s)", key, gone.Round(100*time.Millisecond), expireB)
	default:
		f.Held("B dropped %s %s after learning it", key, gone.Round(100*time.Millisecond))
	}
	if _, ok := waitFor(ctx, f, a.Node, "cluster/exp", key, 0); !ok {
		f.Unmet = "A no longer holds " + key + ": B's loss of it cannot be told from A's"
	}
}

func expireRuntime(ctx context.Context, s *setup, t *verdict.Trial, f *judge.Facts) error {
	_, b := s.ab()
	key := fmt.Sprintf("rt-%03d", t.N)
	if !s.writeA(ctx, f, "cluster/exp", key, "data.gpc0 1") {
		return nil
	}
	if _, ok := waitFor(ctx, f, b.Node, "cluster/exp", key, bound); !ok {
		f.Violated("A's write of %s never reached B within %s", key, bound)
		return nil
	}
	checkExpiry(ctx, s, t, f, key, time.Now())
	return nil
}

// expireResync: B restarts afresh and learns A's entries by a full
// resync, whose updates carry the sender's remaining lifetime.
func expireResync(ctx context.Context, s *setup, t *verdict.Trial, f *judge.Facts) error {
	_, b := s.ab()
	key := fmt.Sprintf("rs-%03d", t.N)
	if !s.writeA(ctx, f, "cluster/exp", key, "data.gpc0 1") {
		return nil
	}
	if err := s.c.Restart(ctx, b, 30*time.Second); err != nil {
		f.Unmet = "restarting B: " + err.Error()
		return nil
	}
	if _, ok := waitFor(ctx, f, b.Node, "cluster/exp", key, cluster.MeshTimeout); !ok {
		if !s.mesh(ctx, f) {
			return nil
		}
		if late := s.lateLink(ctx); late != "" {
			f.Unmet = late
			return nil
		}
		f.Violated("B restarted and resynced from A without learning %s", key)
		return nil
	}
	checkExpiry(ctx, s, t, f, key, time.Now())
	return nil
}

// lateLink is why B's missing entry says nothing ("" when it does): B's
// link to A came up too late for its resync request (judge.LateLink).
func (s *setup) lateLink(ctx context.Context) string {
	a, b := s.ab()
	procs, err := b.Node.Procs(ctx)
	w, ok := procs.Current()
	if err != nil || !ok {
		return fmt.Sprintf("B's worker's uptime could not be read (%v): whether its link to A came up before its resync timeout is unknown", err)
	}
	sec, err := b.Node.Section(ctx, node.StatsSocket, s.c.Section)
	if err != nil {
		return "B's show peers could not be read: whether its link to A came up before its resync timeout is unknown: " + err.Error()
	}
	p, _ := sec.Peer(a.Name)
	age, never, ok := p.Delay("last_hdshk")
	if !ok || never {
		return fmt.Sprintf("B's show peers gives no handshake with A (last_hdshk=%q)", p.LastHdshk)
	}
	return judge.LateLink(w.Uptime, age)
}

func keyTypeDiffers(ctx context.Context, s *setup, t *verdict.Trial, f *judge.Facts) error {
	_, b := s.ab()
	// "123" would read as an integer key if B applied A's string table.
	keys := []string{fmt.Sprintf("kt-%03d", t.N), fmt.Sprint(100 + t.N)}
	probe := fmt.Sprintf("kt-probe-%03d", t.N)
	for _, k := range keys {
		if !s.writeA(ctx, f, "cluster/keys", k, "data.gpc0 3") {
			return nil
		}
	}
	// A write to a table both define the same way, after: once B has it,
	// B has read everything A sent before it.
	if !s.writeA(ctx, f, "cluster/exp", probe, "data.gpc0 1") {
		return nil
	}
	if _, ok := waitFor(ctx, f, b.Node, "cluster/exp", probe, bound); !ok {
		f.Violated("after A wrote its string-keyed table, B no longer learns `exp` (%s never arrived within %s)", probe, bound)
		return nil
	}
	tb, err := b.Node.Table(ctx, node.StatsSocket, "cluster/keys")
	if err != nil {
		return err
	}
	if len(tb.Entries) > 0 {
		var got []string
		for _, e := range tb.Entries {
			got = append(got, e.Key)
		}
		f.Violated("B's integer table `keys` applied entries from A's string table: %s", strings.Join(got, ", "))
	} else {
		f.Held("B's integer table `keys` stayed empty while A wrote %s; `exp` still replicates", strings.Join(keys, ", "))
	}
	return nil
}

func typesDiffer(ctx context.Context, s *setup, t *verdict.Trial, f *judge.Facts) error {
	_, b := s.ab()
	key := fmt.Sprintf("ty-%03d", t.N)
	if !s.writeA(ctx, f, "cluster/types", key, "data.gpc0 5 data.http_req_cnt 9") {
		return nil
	}
	e, ok := waitFor(ctx, f, b.Node, "cluster/types", key, bound)
	switch data := e.Data; {
	case !ok:
		f.Violated("A's write of %s (a table both have, with other stored types) never reached B within %s", key, bound)
	case data["gpc0"] != "5" || data["gpc1"] != "0" || data["http_req_cnt"] != "":
		f.Violated("B stores %s as %v, want gpc0=5 gpc1=0 and no http_req_cnt", key, data)
	default:
		f.Held("B stores %s as gpc0=5 gpc1=0 (A's http_req_cnt dropped)", key)
	}
	return nil
}

func tableMissing(ctx context.Context, s *setup, t *verdict.Trial, f *judge.Facts) error {
	_, b := s.ab()
	for i := range 20 {
		if !s.writeA(ctx, f, "cluster/onlya", fmt.Sprintf("oa-%03d-%02d", t.N, i), "data.gpc0 1") {
			return nil
		}
	}
	probe := fmt.Sprintf("oa-probe-%03d", t.N)
	if !s.writeA(ctx, f, "cluster/exp", probe, "data.gpc0 1") {
		return nil
	}
	if _, ok := waitFor(ctx, f, b.Node, "cluster/exp", probe, bound); !ok {
		f.Violated("after A wrote 20 entries of a table B lacks, B no longer learns `exp` (%s never arrived within %s)", probe, bound)
		return nil
	}
	// The link must be up, or back by HAProxy's own reconnect, within the
	// time a mesh takes to form: not a 2 s glance, and a socket harp could
	// not read is no link down.
	mesh := s.c.Meshed(ctx, cluster.MeshTimeout)
	switch down, ok := mesh.Get(); {
	case !ok:
		f.NotRead("%s", mesh.Unknown())
	case len(down) > 0:
		f.Violated("after A wrote a table B lacks, the link stayed down for %s: %s", cluster.MeshTimeout, strings.Join(down, ", "))
	default:
		f.Held("B kept learning `exp` and the link is up after A wrote 20 entries of a table B lacks")
	}
	return nil
}

// session gives an established session of harp's peer with node C,
// dialling again when the last one ended.
func (s *setup) session(ctx context.Context, f *judge.Facts) *peers.Conn {
	if s.conn != nil {
		if !s.conn.WaitClosed(0) {
			return s.conn
		}
		s.conn = nil
	}
	c, unmet := s.dial(ctx)
	if unmet != "" {
		f.Unmet = unmet
		if c != nil {
			c.Close() // half ready: the next check dials again
		}
		return nil
	}
	s.conn = c
	f.Held("nodeC defines crafted/t on the wire as name %q, key type %d, key length %d, expire %d ms", s.def.Name, s.def.KeyType, s.def.KeyLen, s.def.Expire)
	return c
}

// dial completes a handshake, waits until nodeC shows the session
// established, and reads nodeC's own definition of crafted/t from an
// update it sends (crafted messages differ from it only where a check
// says so).
func (s *setup) dial(ctx context.Context) (*peers.Conn, string) {
	c, err := s.probe.Accepted(ctx, peers.DefaultOptions, 10*time.Second)
	if err != nil {
		return nil, "harp's peers client was never accepted by nodeC (handshake status 200) within 10 s"
	}
	if _, err := s.probe.Established(ctx, 5*time.Second); err != nil {
		return c, "nodeC never showed harp's session established"
	}
	if err := s.cnode.SetEntry(ctx, node.StatsSocket, "crafted/t", "harp-def", "data.gpc0 1"); err != nil {
		return c, "writing on nodeC: " + err.Error()
	}
	wctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	ev, err := c.WaitFor(wctx, func(e peers.Event) bool { return e.Update != nil && e.Table != nil })
	if err != nil {
		return c, fmt.Sprintf("nodeC never sent harp an update of crafted/t within %s: its table definition is unknown", bound)
	}
	if ev.Table.KeyType != peers.KeyString {
		return c, fmt.Sprintf("nodeC defines crafted/t with key type %d on the wire, not string (%d)", ev.Table.KeyType, peers.KeyString)
	}
	s.def = *ev.Table
	s.def.ID = 1
	return c, ""
}

// send writes crafted messages and then checks the session survived them.
func (s *setup) send(ctx context.Context, f *judge.Facts, conn *peers.Conn, what string, ms ...peers.Message) bool {
	if err := conn.Send(ms...); err != nil {
		ended(f, conn, fmt.Sprintf("during %s (%v)", what, err))
		return false
	}
	return true
}

// ended records a session that ended: nodeC's doing only when nodeC closed
// or reset it; harp's own decoder giving up, or harp closing it, is harp's
// and decides nothing.
func ended(f *judge.Facts, conn *peers.Conn, when string) {
	if byPeer, why := conn.Ended(); byPeer {
		f.Violated("nodeC closed harp's session %s", when)
	} else {
		f.NotRead("harp's session with nodeC ended on harp's side %s: %v", when, why)
	}
}

func update(d peers.TableDef, key []byte, values map[int]peers.Value, timed bool, expire uint32) peers.Message {
	m, err := peers.Update{Key: key, Values: values, Timed: timed, Expire: expire}.Encode(d)
	if err != nil {
		panic(err) // cannot happen: string keys of any length, integer keys of 4 bytes
	}
	return m
}

func gpc0(v uint64) map[int]peers.Value { return map[int]peers.Value{2: {Ints: []uint64{v}}} }

// alive checks, after crafted messages, that a correct update right after
// is applied and that the session is still established.
func (s *setup) alive(ctx context.Context, f *judge.Facts, conn *peers.Conn, key string, value uint64) {
	if !s.send(ctx, f, conn, "a correct update", s.def.Encode(), update(s.def, []byte(key), gpc0(value), false, 0)) {
		return
	}
	e, ok := waitFor(ctx, f, s.cnode, "crafted/t", key, bound)
	switch {
	case !ok:
		f.Violated("a correct update (%s) sent right after was not applied within %s", key, bound)
	case e.Data["gpc0"] != fmt.Sprint(value):
		f.Violated("a correct update (%s gpc0=%d) sent right after was stored as gpc0=%s", key, value, e.Data["gpc0"])
	default:
		f.Held("a correct update sent right after was applied")
	}
	if conn.WaitClosed(0) {
		ended(f, conn, "after the messages")
		return
	}
	if p, err := s.probe.State(ctx); err != nil {
		f.Unmet = "reading nodeC's show peers failed: " + err.Error()
	} else if !p.Established() {
		f.Violated("nodeC no longer shows harp's session established")
	}
}

func craftedExpiry(ctx context.Context, s *setup, t *verdict.Trial, f *judge.Facts, conn *peers.Conn) error {
	key := fmt.Sprintf("ce-%03d", t.N)
	huge := uint32(1<<31 - 1)
	if !s.send(ctx, f, conn, "a timed update", s.def.Encode(), update(s.def, []byte(key), gpc0(4), true, huge)) {
		return nil
	}
	e, ok := waitFor(ctx, f, s.cnode, "crafted/t", key, bound)
	switch {
	case !ok:
		f.Unmet = fmt.Sprintf("the crafted timed update (%s, expire %d ms) was never applied: its expiry cannot be judged", key, huge)
	case time.Duration(e.Exp)*time.Millisecond > expireC:
		f.Violated("a timed update with expire %d ms made %s expire in %d ms, beyond the table's %s", huge, key, e.Exp, expireC)
	default:
		f.Held("a timed update with expire %d ms made %s expire in %d ms (gpc0=%s)", huge, key, e.Exp, e.Data["gpc0"])
	}
	s.alive(ctx, f, conn, key+"-after", 6)
	return nil
}

func craftedUnknownTable(ctx context.Context, s *setup, t *verdict.Trial, f *judge.Facts, conn *peers.Conn) error {
	key := fmt.Sprintf("cu-%03d", t.N)
	nosuch := s.def
	nosuch.ID, nosuch.Name = 2, "nosuch"
	// t is defined first: were the unknown definition ignored without
	// resetting the current table, its update would land in t.
	msgs := []peers.Message{s.def.Encode(), nosuch.Encode(), update(nosuch, []byte(key), gpc0(9), false, 0),
		peers.Ack{TableID: 2, UpdateID: 1}.Encode(), peers.Switch{TableID: 77}.Encode(), update(nosuch, []byte(key+"-sw"), gpc0(9), false, 0)}
	if !s.send(ctx, f, conn, "updates for a table nodeC lacks", msgs...) {
		return nil
	}
	s.alive(ctx, f, conn, key+"-after", 7)
	if _, ok, err := s.cnode.Entry(ctx, node.StatsSocket, "crafted/t", key); err == nil && ok {
		f.Violated("an update for table `nosuch` (which nodeC lacks) was stored in `t`")
	}
	if _, ok, err := s.cnode.Entry(ctx, node.StatsSocket, "crafted/t", key+"-sw"); err == nil && ok {
		f.Violated("an update after a switch to unknown table id 77 was stored in `t`")
	}
	return nil
}

func craftedWrongKey(ctx context.Context, s *setup, t *verdict.Trial, f *judge.Facts, conn *peers.Conn) error {
	wrong := s.def
	wrong.ID, wrong.KeyType, wrong.KeyLen = 3, peers.KeySInt, 4
	before, err := s.cnode.Table(ctx, node.StatsSocket, "crafted/t")
	if err != nil {
		return err
	}
	key := []byte{0x63, 0x77, 0x2d, byte('0' + t.N%10)} // "cw-N" if read as a string
	if !s.send(ctx, f, conn, "an integer-keyed definition of `t`", s.def.Encode(), wrong.Encode(), update(wrong, key, gpc0(88), false, 0)) {
		return nil
	}
	s.alive(ctx, f, conn, fmt.Sprintf("cw-%03d-after", t.N), 8)
	after, err := s.cnode.Table(ctx, node.StatsSocket, "crafted/t")
	if err != nil {
		return err
	}
	had := map[string]bool{}
	for _, e := range before.Entries {
		had[e.Key] = true
	}
	for _, e := range after.Entries {
		if !had[e.Key] && e.Data["gpc0"] == "88" {
			f.Violated("an update under an integer-keyed definition of `t` was stored in nodeC's string table as %q", e.Key)
		}
	}
	return nil
}

func craftedTypes(ctx context.Context, s *setup, t *verdict.Trial, f *judge.Facts, conn *peers.Conn) error {
	rich := s.def
	rich.ID = 4
	rich.Types = []int{1, 2, 5, 9, 17} // gpt0, gpc0, conn_rate, http_req_cnt, gpc1
	rich.Period = map[int]uint64{5: 10000}
	key := fmt.Sprintf("ct-%03d", t.N)
	values := map[int]peers.Value{1: {Ints: []uint64{11}}, 2: {Ints: []uint64{7}}, 5: {Freq: [][3]uint64{{100, 3, 2}}},
		9: {Ints: []uint64{900}}, 17: {Ints: []uint64{8}}}
	if !s.send(ctx, f, conn, "an update with data types nodeC lacks", rich.Encode(), update(rich, []byte(key), values, false, 0)) {
		return nil
	}
	e, ok := waitFor(ctx, f, s.cnode, "crafted/t", key, bound)
	switch data := e.Data; {
	case !ok:
		f.Violated("an update carrying data types nodeC lacks was not applied within %s", bound)
	case data["gpc0"] != "7" || len(data) != 1:
		f.Violated("an update carrying gpt0=11 gpc0=7 conn_rate http_req_cnt=900 gpc1=8 was stored as %v (want gpc0=7 only)", data)
	default:
		f.Held("an update carrying five data types was stored as gpc0=7 only")
	}
	s.alive(ctx, f, conn, key+"-after", 9)
	return nil
}

// Package learnedentries: an entry learnt from a peer obeys the receiving
// table, not the sender's. Its expiry never exceeds the receiver's
// `expire` and it does not outlive it; a table whose key type differs is
// never applied; only the receiver's stored data types are kept; updates
// for a table the receiver lacks leave the session working for the tables
// it has. Checked between two real nodes whose definitions differ, and
// with harp's own peers client sending crafted messages.
package learnedentries

import (
	"cmp"
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
		"Expectations: B's `exp` entries have exp <= 4000 ms when learnt (at runtime and by a resync after B restarts afresh) and are gone from B within 4 s + 4 s while A keeps them (a restarted B that lacks the entry violates this only if its link to A came up within HAProxy's 5 s resync timeout, else its resync may have ended untaught, and only if harp read B's table within 4 s of B's worker starting and never paused 4 s between reads, else the entry may have come and gone unseen: INCONCLUSIVE otherwise); B's integer `keys` table never gets A's string keys, and replication of `exp` keeps working; B's `types` entry has A's gpc0 and gpc1 0; A writing `onlya` does not stop B learning `exp`. C: a timed update with a 2^31-1 ms expiry gets exp <= 10000; an update after a definition of a table C lacks, or of `t` with an integer key, is not applied (to `t` or any table), and a correct update right after is; an update carrying gpt0, gpc0, conn_rate, http_req_cnt and gpc1 stores gpc0 exactly. After every crafted message the session is still established.",
	},
	Run: run,
})

// Kind is one check, in trial order: of the two real nodes once they are
// meshed, or of harp's crafted messages on an established session with
// nodeC (else unmet).
type Kind struct {
	Name    string
	meshed  func(ctx context.Context, s *setup, t *verdict.Trial, f *judge.Facts) error
	crafted func(ctx context.Context, s *setup, t *verdict.Trial, f *judge.Facts, conn *peers.Conn) error
}

var Kinds = []Kind{
	{Name: "expire, learnt at runtime", meshed: expireRuntime},
	{Name: "expire, learnt by resync", meshed: expireResync},
	{Name: "key type differs", meshed: keyTypeDiffers},
	{Name: "stored types differ", meshed: typesDiffer},
	{Name: "table the receiver lacks", meshed: tableMissing},
	{Name: "crafted: huge expiry", crafted: craftedExpiry},
	{Name: "crafted: unknown table", crafted: craftedUnknownTable},
	{Name: "crafted: wrong key type", crafted: craftedWrongKey},
	{Name: "crafted: data types the receiver lacks", crafted: craftedTypes},
}

const (
	expireB = 4 * time.Second  // B's `exp` table
	expireC = 10 * time.Second // C's `t` table
	slack   = 4 * time.Second  // expiry is checked by a task, not to the millisecond; self-tests share 2 CPUs
	bound   = 5 * time.Second  // replication between two nodes (observed: under 100 ms)
)

type setup struct {
	c     *cluster.Cluster
	a, b  *cluster.Member
	cnode *node.Node
	peer  *remotepeer.Sender // harp as nodeC's remote peer
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
	s := &setup{c: c, a: c.Members[0], b: c.Members[1]}
	cfg, err := config.Render("conf-learned-entries-obey-receiver.cfg.tmpl", map[string]any{"Threads": 1, "LocalPeer": "harp"})
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
	s.peer = &remotepeer.Sender{Probe: &remotepeer.Probe{Node: s.cnode, Addr: addr, Section: "crafted", Local: "harp", Remote: "remote"}}
	if unmet := s.peer.WaitResync(ctx, 20*time.Second); unmet != "" {
		return verdict.Outcome{Unmet: "nodeC: " + unmet}
	}
	defer s.peer.Close()
	return env.RunTrials(ctx, func(ctx context.Context, t *verdict.Trial) error {
		k := Kinds[(t.N-1)%len(Kinds)]
		ev := &judge.Evidence{Kind: k.Name, Facts: judge.Facts{Kind: k.Name}}
		t.Evidence = ev
		f := &ev.Facts
		var err error
		if k.meshed != nil {
			if s.mesh(ctx, f) {
				err = k.meshed(ctx, s, t, f)
			}
		} else if conn := s.session(ctx, f); conn != nil {
			err = k.crafted(ctx, s, t, f, conn)
		}
		if seen := f.Seen(); len(seen) > 0 {
			t.Notef("%s", strings.Join(seen, "; "))
		}
		t.Violation, t.Unmet = judge.Check(*f)
		return err
	})
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

// writeA writes the keys on A in turn; false when it could not (the check
// is then unmet).
func (s *setup) writeA(ctx context.Context, f *judge.Facts, table, data string, keys ...string) bool {
	for _, key := range keys {
		if err := s.a.Node.SetEntry(ctx, node.StatsSocket, table, key, data); err != nil {
			f.Unmet = "writing on A: " + err.Error()
			return false
		}
	}
	return true
}

// thenExp writes keys to table on A, then probe to `exp`, which both
// define alike: once B has the probe, B has read everything A sent before
// it. False when A could not write (unmet) or B never got the probe
// (violated: after what A wrote, B no longer learns `exp`).
func (s *setup) thenExp(ctx context.Context, f *judge.Facts, table, data string, keys []string, probe, after string) bool {
	if !s.writeA(ctx, f, table, data, keys...) || !s.writeA(ctx, f, "cluster/exp", "data.gpc0 1", probe) {
		return false
	}
	if _, ok := waitFor(ctx, f, s.b.Node, "cluster/exp", probe, bound); !ok {
		f.Violated("after A wrote %s, B no longer learns `exp` (%s never arrived within %s)", after, probe, bound)
		return false
	}
	return true
}

func (s *setup) mesh(ctx context.Context, f *judge.Facts) bool {
	if u := s.c.WaitMesh(ctx, cluster.MeshTimeout); u != "" {
		f.Unmet = "the two nodes are not meshed: " + u
		return false
	}
	return true
}

// checkExpiry: B's entry, once learnt, expires by B's table and leaves.
func (s *setup) checkExpiry(ctx context.Context, f *judge.Facts, key string, learnt time.Time) {
	e, ok := waitFor(ctx, f, s.b.Node, "cluster/exp", key, 0)
	if !ok {
		f.Violated("B dropped %s before reading its expiry", key)
		return
	}
	if time.Duration(e.Exp)*time.Millisecond > expireB {
		f.Violated("B's entry %s expires in %d ms, beyond B's table expire %s (A's is 1h)", key, e.Exp, expireB)
	} else {
		f.Held("B's entry %s expires in %d ms (B's expire %s)", key, e.Exp, expireB)
	}
	at, held, err := s.b.Node.WaitGone(ctx, node.StatsSocket, "cluster/exp", key, expireB+slack+time.Since(learnt), 100*time.Millisecond)
	switch gone := at.Sub(learnt); {
	case err != nil:
		// The last reading failed: whether B still held it is unknown.
		f.NotRead("reading B's exp table at the end of its expiry: %v", err)
	case held:
		f.Violated("B still holds %s %s after learning it (B's expire %s)", key, gone.Round(100*time.Millisecond), expireB)
	default:
		f.Held("B dropped %s %s after learning it", key, gone.Round(100*time.Millisecond))
	}
	if _, ok := waitFor(ctx, f, s.a.Node, "cluster/exp", key, 0); !ok {
		f.Unmet = "A no longer holds " + key + ": B's loss of it cannot be told from A's"
	}
}

func expireRuntime(ctx context.Context, s *setup, t *verdict.Trial, f *judge.Facts) error {
	key := fmt.Sprintf("rt-%03d", t.N)
	if !s.writeA(ctx, f, "cluster/exp", "data.gpc0 1", key) {
		return nil
	}
	if _, ok := waitFor(ctx, f, s.b.Node, "cluster/exp", key, bound); !ok {
		f.Violated("A's write of %s never reached B within %s", key, bound)
		return nil
	}
	s.checkExpiry(ctx, f, key, time.Now())
	return nil
}

// expireResync: B restarts afresh and learns A's entries by a full
// resync, whose updates carry the sender's remaining lifetime.
func expireResync(ctx context.Context, s *setup, t *verdict.Trial, f *judge.Facts) error {
	key := fmt.Sprintf("rs-%03d", t.N)
	if !s.writeA(ctx, f, "cluster/exp", "data.gpc0 1", key) {
		return nil
	}
	if err := s.c.Restart(ctx, s.b, 30*time.Second); err != nil {
		f.Unmet = "restarting B: " + err.Error()
		return nil
	}
	if ok, first, gap := watchB(ctx, f, s.b.Node, key); !ok {
		if !s.mesh(ctx, f) {
			return nil
		}
		if late := s.lateLink(ctx, first, gap); late != "" {
			f.Unmet = late
			return nil
		}
		f.Violated("B restarted and resynced from A without learning %s", key)
		return nil
	}
	s.checkExpiry(ctx, f, key, time.Now())
	return nil
}

// watchB waits for key in B's `exp` as waitFor does, and records when
// harp first read the table and its longest pause between reads: an entry
// that lives B's 4 s could come and go unseen before or between them
// (judge.Unseen).
func watchB(ctx context.Context, f *judge.Facts, n *node.Node, key string) (ok bool, first time.Time, gap time.Duration) {
	var last time.Time
	_, ok, err := n.WaitEntry(ctx, node.StatsSocket, "cluster/exp", key, cluster.MeshTimeout, 20*time.Millisecond, func(_ cliout.Entry, seen bool) bool {
		now := time.Now() // called after each read that answered
		if first.IsZero() {
			first = now
		} else {
			gap = max(gap, now.Sub(last))
		}
		last = now
		return seen
	})
	if err != nil && f.Unmet == "" {
		f.Unmet = fmt.Sprintf("reading cluster/exp kept failing: %v", err)
	}
	return ok, first, gap
}

// lateLink is why B's missing entry says nothing ("" when it does): B's
// link to A came up too late for its resync request (judge.LateLink), or
// harp looked at B's table too late or too seldom to see an entry that
// lives B's expire (judge.Unseen).
func (s *setup) lateLink(ctx context.Context, first time.Time, gap time.Duration) string {
	if first.IsZero() {
		return "harp never read B's cluster/exp after the restart: whether B learnt the entry is unknown"
	}
	sinceFirst := time.Since(first) // before the uptime read: errs towards unseen
	procs, err := s.b.Node.Procs(ctx)
	w, ok := procs.Current()
	if err != nil || !ok {
		return fmt.Sprintf("B's worker's uptime could not be read (%v): whether its link to A came up before its resync timeout is unknown", err)
	}
	sec, err := s.b.Node.Section(ctx, node.StatsSocket, s.c.Section)
	if err != nil {
		return "B's show peers could not be read: whether its link to A came up before its resync timeout is unknown: " + err.Error()
	}
	p, _ := sec.Peer(s.a.Name)
	age, never, ok := p.Delay("last_hdshk")
	if !ok || never {
		return fmt.Sprintf("B's show peers gives no handshake with A (last_hdshk=%q)", p.LastHdshk)
	}
	return cmp.Or(judge.LateLink(w.Uptime, age), judge.Unseen(w.Uptime, sinceFirst, gap, expireB))
}

func keyTypeDiffers(ctx context.Context, s *setup, t *verdict.Trial, f *judge.Facts) error {
	// "123" would read as an integer key if B applied A's string table.
	keys := []string{fmt.Sprintf("kt-%03d", t.N), fmt.Sprint(100 + t.N)}
	if !s.thenExp(ctx, f, "cluster/keys", "data.gpc0 3", keys, fmt.Sprintf("kt-probe-%03d", t.N), "its string-keyed table") {
		return nil
	}
	tb, err := s.b.Node.Table(ctx, node.StatsSocket, "cluster/keys")
	if err != nil {
		return err
	}
	if got := tb.Keys(); len(got) > 0 {
		f.Violated("B's integer table `keys` applied entries from A's string table: %s", strings.Join(got, ", "))
	} else {
		f.Held("B's integer table `keys` stayed empty while A wrote %s; `exp` still replicates", strings.Join(keys, ", "))
	}
	return nil
}

func typesDiffer(ctx context.Context, s *setup, t *verdict.Trial, f *judge.Facts) error {
	key := fmt.Sprintf("ty-%03d", t.N)
	if !s.writeA(ctx, f, "cluster/types", "data.gpc0 5 data.http_req_cnt 9", key) {
		return nil
	}
	e, ok := waitFor(ctx, f, s.b.Node, "cluster/types", key, bound)
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
	keys := make([]string, 20)
	for i := range keys {
		keys[i] = fmt.Sprintf("oa-%03d-%02d", t.N, i)
	}
	if !s.thenExp(ctx, f, "cluster/onlya", "data.gpc0 1", keys, fmt.Sprintf("oa-probe-%03d", t.N), "20 entries of a table B lacks") {
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

// session is the established session of harp's peer with nodeC, dialled
// again when the last one ended (else the check is unmet).
func (s *setup) session(ctx context.Context, f *judge.Facts) *peers.Conn {
	conn, fresh, err := s.peer.Session(ctx, peers.DefaultOptions, 10*time.Second, 5*time.Second, func(c *peers.Conn) error { return s.readDef(ctx, c) })
	if err != nil {
		f.Unmet = err.Error()
		return nil
	}
	if fresh {
		f.Held("nodeC defines crafted/t on the wire as name %q, key type %d, key length %d, expire %d ms", s.def.Name, s.def.KeyType, s.def.KeyLen, s.def.Expire)
	}
	return conn
}

// readDef reads nodeC's own definition of crafted/t from an update it
// sends: crafted messages differ from it only where a check says so.
func (s *setup) readDef(ctx context.Context, c *peers.Conn) error {
	d, err := s.peer.TableDef(ctx, c, "crafted/t", "harp-def", "data.gpc0 1", bound)
	if err != nil {
		return err
	}
	if d.KeyType != peers.KeyString {
		return fmt.Errorf("nodeC defines crafted/t with key type %d on the wire, not string (%d)", d.KeyType, peers.KeyString)
	}
	s.def = d
	s.def.ID = 1
	return nil
}

// send writes crafted messages; false when the session ended.
func send(f *judge.Facts, conn *peers.Conn, what string, ms ...peers.Message) bool {
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
	if !send(f, conn, "a correct update", s.def.Encode(), update(s.def, []byte(key), gpc0(value), false, 0)) {
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
	if p, err := s.peer.State(ctx); err != nil {
		f.Unmet = "reading nodeC's show peers failed: " + err.Error()
	} else if !p.Established() {
		f.Violated("nodeC no longer shows harp's session established")
	}
}

func craftedExpiry(ctx context.Context, s *setup, t *verdict.Trial, f *judge.Facts, conn *peers.Conn) error {
	key := fmt.Sprintf("ce-%03d", t.N)
	huge := uint32(1<<31 - 1)
	if !send(f, conn, "a timed update", s.def.Encode(), update(s.def, []byte(key), gpc0(4), true, huge)) {
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
	if !send(f, conn, "updates for a table nodeC lacks", msgs...) {
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
	if !send(f, conn, "an integer-keyed definition of `t`", s.def.Encode(), wrong.Encode(), update(wrong, key, gpc0(88), false, 0)) {
		return nil
	}
	s.alive(ctx, f, conn, fmt.Sprintf("cw-%03d-after", t.N), 8)
	after, err := s.cnode.Table(ctx, node.StatsSocket, "crafted/t")
	if err != nil {
		return err
	}
	for _, e := range after.Added(before) {
		if e.Data["gpc0"] == "88" {
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
	if !send(f, conn, "an update with data types nodeC lacks", rich.Encode(), update(rich, []byte(key), values, false, 0)) {
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

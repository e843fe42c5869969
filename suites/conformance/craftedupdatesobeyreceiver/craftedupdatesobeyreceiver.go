// Package craftedupdatesobeyreceiver: what harp's own peers client sends obeys the
// receiving table, and no message a correct peer could send ends the
// session. A timed update's expiry is capped by the table's `expire`;
// updates under a definition of a table the node lacks, or of its table
// with another key type, are not applied; only the table's stored data
// types are kept; a new key learnt with a shorter expiry than the table's
// is purged by its own; after each, a correct update is applied and the session
// is still established. The same rules between two real nodes are
// conf-learned-entries-obey-receiver's.
package craftedupdatesobeyreceiver

import (
	_ "embed"

	"context"
	"errors"
	"fmt"
	"time"

	"github.com/harp-project/harp/harness/core/config"
	"github.com/harp-project/harp/harness/core/peerwire"
	"github.com/harp-project/harp/harness/core/suite"
	"github.com/harp-project/harp/harness/core/verdict"
	"github.com/harp-project/harp/harness/live/node"
	"github.com/harp-project/harp/harness/live/peers"
	"github.com/harp-project/harp/harness/live/remotepeer"
	"github.com/harp-project/harp/harness/live/suiteenv"
	"github.com/harp-project/harp/suites/conformance/craftedupdatesobeyreceiver/judge"
)

// configTemplate is the suite's config, next to it (conf-crafted-updates-obey-receiver.cfg.tmpl); the shared
// blocks (the global section) come from fixtures/templates.
//
//go:embed conf-crafted-updates-obey-receiver.cfg.tmpl
var configTemplate string

var Suite = suite.Register(&suite.Suite{
	ID:       judge.SuiteID,
	Upstream: "conformance: a peer's crafted updates are stored by the receiving table's rules",
	Title:    "Crafted peer updates obey the receiving table and leave the session up (huge expiry, unknown table, wrong key type, data types the receiver lacks, a new key's short expiry)",
	Summary:  "one node and harp's peers client as its remote peer, sending updates a real peer could: a huge expiry, an unknown table, a wrong key type, data types the table lacks, a new key with a short expiry; the table's rules win and the session survives",
	Labels:   []string{"area:conformance", "area:peers"},
	Trials:   len(Kinds),
	Noun:     "checks",
	Steps: []string{
		"Setup: one node whose peers section `crafted` holds its local peer `harp` and a remote peer `remote` that harp's peers client plays (handshake status 200, session established); its table `t` is type string len 32, expire 10s, store gpc0, and its table `ts` the same with expire 60s (only the short-expiry check writes there). Precondition: the section's initial resync finished. harp reads the node's own definition of `t` from an update it pushes (after `set table crafted/t key harp-def`); crafted messages differ from it only where a check says so.",
		"Kinds, one per trial (TRIALS=10 runs each twice): " + suiteenv.KindNames(Kinds) + ".",
		"Expectations: a timed update with a 2^31-1 ms expiry gets exp <= 10000; an update after a definition of a table the node lacks, or of `t` with an integer key, is not applied (to `t` or any table), and a correct update right after is; an update carrying gpt0, gpc0, conn_rate, http_req_cnt and gpc1 stores gpc0 exactly; a timed update of a new key of `ts` with a 1 s expiry is learnt (ts's count in the table list, which purges nothing, goes up) and purged within 10 s, not kept for the table's 60 s. After every crafted message the session is still established; a session harp's own side ended decides nothing, nor does one HAProxy's reconnect check dropped (no_hbt up, proto_err not) after it applied the update sent after the messages, or while harp had sent nothing for 4 s. harp dials its session once HAProxy's own attempts to connect to `remote` settled, and again (3 tries) when it collided with one anyway (coll up): the superseded attempt's release would clear its alive flag (#3519).",
	},
	Run:       run,
	NoRegTest: "updates crafted in the peers protocol by harp's peer: VTest has no peers client",
})

// Kinds are the checks, in trial order, each a turn on an established
// session.
var Kinds = []suiteenv.Kind[*turn]{
	{Name: "huge expiry", Check: craftedExpiry},
	{Name: "unknown table", Check: craftedUnknownTable},
	{Name: "wrong key type", Check: craftedWrongKey},
	{Name: "data types the receiver lacks", Check: craftedTypes},
	{Name: "short expiry of a new key", Check: craftedShortExpiry},
}

const (
	expireT = 10 * time.Second // the node's table `t`
	bound   = 10 * time.Second // an update applied (observed: under 100 ms)
	// ts: the table whose entries only the short-expiry kind writes, and
	// the expiry its timed update gives a new key there.
	expireTS = 60 * time.Second
	shortExp = time.Second
	// shortGone: how soon after it was learnt the short-lived entry must
	// be purged (its 1 s, and the expiry task's lateness on a loaded
	// machine); one kept to the table's 60 s has the table's expiry.
	shortGone = 10 * time.Second
)

type setup struct {
	n    *node.Node
	peer *remotepeer.Sender // harp as the node's remote peer
	// def is the node's definition of crafted/t as HAProxy sends it (with
	// harp's table id), read when the session starts.
	def peerwire.TableDef
}

// turn is one check's: the setup, and its turn on harp's session with the
// node (its messages, and whether the node kept the session through them).
type turn struct {
	*setup
	*remotepeer.Turn
}

func run(ctx context.Context, env *suiteenv.Env) verdict.Outcome {
	cfg, err := config.RenderText("conf-crafted-updates-obey-receiver.cfg.tmpl", configTemplate, map[string]any{"Threads": 1, "LocalPeer": "harp"})
	if err != nil {
		return verdict.Outcome{Err: err}
	}
	n, addr, out := env.StartServing(ctx, node.Options{Config: cfg, Ports: []string{"10000/tcp"}}, 1, "10000/tcp")
	if n == nil {
		return out
	}
	s := &setup{n: n, peer: &remotepeer.Sender{Probe: &remotepeer.Probe{Node: n, Addr: addr, Section: "crafted", Local: "harp", Remote: "remote"}}}
	if unmet := s.peer.WaitResync(ctx, 20*time.Second); unmet != "" {
		return verdict.Outcome{Unmet: unmet}
	}
	defer s.peer.Close()
	return suiteenv.RunKinds(ctx, env, Kinds, judge.Check, s.begin)
}

// begin starts a check's turn on the established session of harp's peer
// with the node, dialled again when the last one ended (else the check is
// unmet).
func (s *setup) begin(ctx context.Context, f *judge.Facts) (*turn, bool) {
	t, fresh := s.peer.Turn(ctx, &f.Record, peers.DefaultOptions, 10*time.Second, 5*time.Second, func(c *peers.Conn) error { return s.readDef(ctx, c) })
	if t == nil {
		return nil, false
	}
	if fresh {
		f.Held("the node defines crafted/t on the wire as name %q, key type %d, key length %d, expire %d ms", s.def.Name, s.def.KeyType, s.def.KeyLen, s.def.Expire)
	}
	return &turn{s, t}, true
}

// readDef reads the node's own definition of crafted/t from an update it
// sends: crafted messages differ from it only where a check says so.
func (s *setup) readDef(ctx context.Context, c *peers.Conn) error {
	d, err := s.peer.TableDef(ctx, c, "crafted/t", "harp-def", "data.gpc0 1", bound)
	if err != nil {
		return err
	}
	if d.KeyType != peerwire.KeyString {
		return fmt.Errorf("the node defines crafted/t with key type %d on the wire, not string (%d)", d.KeyType, peerwire.KeyString)
	}
	s.def = d
	s.def.ID = 1
	return nil
}

func gpc0(v uint64) map[int]peerwire.Value { return map[int]peerwire.Value{2: {Ints: []uint64{v}}} }

// alive checks, after crafted messages, that a correct update right after
// is applied and that the session is still established (Turn.Kept).
func (s *turn) alive(ctx context.Context, f *judge.Facts, key string, value uint64) {
	if !s.Send("a correct update", s.def.Encode(), peerwire.Update{Key: []byte(key), Values: gpc0(value)}.MustEncode(s.def)) {
		return
	}
	e, ok := s.n.EntryOrUnmet(ctx, &f.Record, "crafted/t", key, bound)
	switch {
	case !ok:
		f.Violated("a correct update (%s) sent right after was not applied within %s", key, bound)
	case e.Data["gpc0"] != fmt.Sprint(value):
		f.Violated("a correct update (%s gpc0=%d) sent right after was stored as gpc0=%s", key, value, e.Data["gpc0"])
	default:
		f.Held("a correct update sent right after was applied")
	}
	applied := ok && e.Data["gpc0"] == fmt.Sprint(value)
	s.Kept(ctx, applied)
}

func craftedExpiry(ctx context.Context, s *turn, t *verdict.Trial, f *judge.Facts) error {
	key := fmt.Sprintf("ce-%03d", t.N)
	huge := uint32(1<<31 - 1)
	if !s.Send("a timed update", s.def.Encode(), peerwire.Update{Key: []byte(key), Values: gpc0(4), Timed: true, Expire: huge}.MustEncode(s.def)) {
		return nil
	}
	e, ok := s.n.EntryOrUnmet(ctx, &f.Record, "crafted/t", key, bound)
	switch {
	case !ok:
		f.Unmet = fmt.Sprintf("the crafted timed update (%s, expire %d ms) was never applied: its expiry cannot be judged", key, huge)
	case time.Duration(e.Exp)*time.Millisecond > expireT:
		f.Violated("a timed update with expire %d ms made %s expire in %d ms, beyond the table's %s", huge, key, e.Exp, expireT)
	default:
		f.Held("a timed update with expire %d ms made %s expire in %d ms (gpc0=%s)", huge, key, e.Exp, e.Data["gpc0"])
	}
	s.alive(ctx, f, key+"-after", 6)
	return nil
}

// craftedShortExpiry sends a timed update of a new key of table ts
// (expire 60s) with a 1 s expiry, and follows ts's entry count in the
// table list (which, unlike a dump of the table, purges nothing): the
// entry is learnt, then purged within shortGone, not kept for the
// table's own expiry.
func craftedShortExpiry(ctx context.Context, s *turn, t *verdict.Trial, f *judge.Facts) error {
	key := fmt.Sprintf("cs-%03d", t.N)
	ts := s.def
	ts.ID, ts.Name, ts.Expire = 5, s.def.Name+"s", uint64(expireTS/time.Millisecond)
	used := func() (int, error) {
		tables, err := s.n.Tables(ctx, node.StatsSocket)
		if err != nil {
			return 0, err
		}
		for _, tb := range tables {
			if tb.Name == "crafted/ts" {
				return tb.Used, nil
			}
		}
		return 0, fmt.Errorf("no table crafted/ts in the table list")
	}
	base, err := used()
	if err != nil {
		return err
	}
	if !s.Send("a timed update of a new key with a short expiry", ts.Encode(), peerwire.Update{Key: []byte(key), Values: gpc0(3), Timed: true, Expire: uint32(shortExp / time.Millisecond)}.MustEncode(ts)) {
		return nil
	}
	if _, err := node.UntilErr(ctx, bound, 20*time.Millisecond, used, func(u int) bool { return u > base }); err != nil {
		f.Unmet = fmt.Sprintf("the timed update of %s (expire %s) was never counted in crafted/ts: its expiry cannot be judged (%v)", key, shortExp, err)
		return nil
	}
	learnt := time.Now()
	u, err := node.UntilErr(ctx, shortGone, 100*time.Millisecond, used, func(u int) bool { return u <= base })
	switch {
	case err == nil:
		f.Held("a new key learnt with expire %s was purged %s after it was learnt", shortExp, time.Since(learnt).Round(100*time.Millisecond))
	case errors.Is(err, node.ErrDeadline) && u > base:
		f.Violated("a new key learnt with expire %s was still in crafted/ts %s after it was learnt (the table's own expire is %s)", shortExp, shortGone, expireTS)
	default:
		f.NotRead("crafted/ts's entries after the short-lived update: %v", err)
	}
	s.alive(ctx, f, key+"-after", 5)
	return nil
}

func craftedUnknownTable(ctx context.Context, s *turn, t *verdict.Trial, f *judge.Facts) error {
	key := fmt.Sprintf("cu-%03d", t.N)
	nosuch := s.def
	nosuch.ID, nosuch.Name = 2, "nosuch"
	// t is defined first: were the unknown definition ignored without
	// resetting the current table, its update would land in t.
	msgs := []peerwire.Message{s.def.Encode(), nosuch.Encode(), peerwire.Update{Key: []byte(key), Values: gpc0(9)}.MustEncode(nosuch),
		peerwire.Ack{TableID: 2, UpdateID: 1}.Encode(), peerwire.Switch{TableID: 77}.Encode(), peerwire.Update{Key: []byte(key + "-sw"), Values: gpc0(9)}.MustEncode(nosuch)}
	if !s.Send("updates for a table the node lacks", msgs...) {
		return nil
	}
	s.alive(ctx, f, key+"-after", 7)
	if _, ok, err := s.n.Entry(ctx, node.StatsSocket, "crafted/t", key); err == nil && ok {
		f.Violated("an update for table `nosuch` (which the node lacks) was stored in `t`")
	}
	if _, ok, err := s.n.Entry(ctx, node.StatsSocket, "crafted/t", key+"-sw"); err == nil && ok {
		f.Violated("an update after a switch to unknown table id 77 was stored in `t`")
	}
	return nil
}

func craftedWrongKey(ctx context.Context, s *turn, t *verdict.Trial, f *judge.Facts) error {
	wrong := s.def
	wrong.ID, wrong.KeyType, wrong.KeyLen = 3, peerwire.KeySInt, 4
	before, err := s.n.Table(ctx, node.StatsSocket, "crafted/t")
	if err != nil {
		return err
	}
	key := []byte{0x63, 0x77, 0x2d, byte('0' + t.N%10)} // "cw-N" if read as a string
	if !s.Send("an integer-keyed definition of `t`", s.def.Encode(), wrong.Encode(), peerwire.Update{Key: key, Values: gpc0(88)}.MustEncode(wrong)) {
		return nil
	}
	s.alive(ctx, f, fmt.Sprintf("cw-%03d-after", t.N), 8)
	after, err := s.n.Table(ctx, node.StatsSocket, "crafted/t")
	if err != nil {
		return err
	}
	for _, e := range after.Added(before) {
		if e.Data["gpc0"] == "88" {
			f.Violated("an update under an integer-keyed definition of `t` was stored in the node's string table as %q", e.Key)
		}
	}
	return nil
}

func craftedTypes(ctx context.Context, s *turn, t *verdict.Trial, f *judge.Facts) error {
	rich := s.def
	rich.ID = 4
	rich.Types = []int{1, 2, 5, 9, 17} // gpt0, gpc0, conn_rate, http_req_cnt, gpc1
	rich.Period = map[int]uint64{5: 10000}
	key := fmt.Sprintf("ct-%03d", t.N)
	values := map[int]peerwire.Value{1: {Ints: []uint64{11}}, 2: {Ints: []uint64{7}}, 5: {Freq: [][3]uint64{{100, 3, 2}}},
		9: {Ints: []uint64{900}}, 17: {Ints: []uint64{8}}}
	if !s.Send("an update with data types the node lacks", rich.Encode(), peerwire.Update{Key: []byte(key), Values: values}.MustEncode(rich)) {
		return nil
	}
	e, ok := s.n.EntryOrUnmet(ctx, &f.Record, "crafted/t", key, bound)
	switch data := e.Data; {
	case !ok:
		f.Violated("an update carrying data types the node lacks was not applied within %s", bound)
	case data["gpc0"] != "7" || len(data) != 1:
		f.Violated("an update carrying gpt0=11 gpc0=7 conn_rate http_req_cnt=900 gpc1=8 was stored as %v (want gpc0=7 only)", data)
	default:
		f.Held("an update carrying five data types was stored as gpc0=7 only")
	}
	s.alive(ctx, f, key+"-after", 9)
	return nil
}

package chaos

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/harp-project/harp/harness/core/obs"
)

// The model the checker holds HAProxy to (doc/peers-v2.0.txt and what the
// builds do): a node pushes its own updates to every peer over one session
// each, in the order it made them, and a receiver applies what it gets in
// that order, last write winning. There is no conflict resolution between
// writers, so every key has one writer (its owner). Hence, once faults are
// healed and the cluster is quiet:
//   - every node holds every key the same (convergence);
//   - that value is one the owner's writes, in the owner's order, leave.
//     A write harp saw succeed took effect between its start and its end.
//     A write whose result harp did not see (a timeout, an error: its node
//     was paused, its connection cut) may never take effect or take effect
//     at any time after its start, also after the owner's later writes (a
//     paused node runs its queued commands when it resumes), up to the
//     owner's next restart;
//   - a restart (the restart fault) clears a node: what it had not yet
//     pushed is gone, and each peer holds the state some prefix of the
//     owner's writes left (the key may be absent), not the same prefix on
//     every peer; the restarted node learns one of them from the peer that
//     teaches it while it resyncs (which may also overwrite what it writes
//     before its resync finished), and the owner pushes it only what the
//     old process had not acknowledged. The protocol promises nothing more
//     (a reconnected peer is not resent what it acknowledged), so after a
//     restart of any node a key must again converge only once its owner
//     wrote it successfully after that restart's resync finished (the
//     owner pushes the whole entry to every peer); until then each node
//     must only hold a value some prefix of the writes leaves;
//   - no entry's time left exceeds its table's expire, and no entry
//     outlives it (last write + expire has passed: gone everywhere);
//   - a reload taken with the node's resync finished loses no key the
//     node held (its new worker learns them all); what its old process
//     had not yet pushed to a peer goes with it, so after its owner's
//     reload, as after a restart, a key must converge again only once the
//     owner wrote it after the new worker was up.
// A history proves nothing where harp could not see (an unknown read of a
// reload, of a final table, of the links or sessions after healing) or
// could not heal every fault: then it is INCONCLUSIVE, whatever broke.

// Slack for timers: show table rounds, and harp's clock is not HAProxy's.
// OutlivedAfter is also how long a run waits past the short table's
// expiry before its final reads.
const (
	expSlack      = time.Second
	OutlivedAfter = 2 * time.Second
)

// Violation is one key that broke the model.
type Violation struct {
	Key  string `json:"key"`
	What string `json:"what"`
	Ops  []int  `json:"ops"` // the operations that touched the key
}

// Result is the checker's verdict on a history.
type Result struct {
	Verdict    string      `json:"verdict"` // PASS, REPRODUCED, INCONCLUSIVE
	Reason     string      `json:"reason"`
	Violations []Violation `json:"violations,omitempty"`
	Keys       int         `json:"keys"`   // keys checked
	Writes     int         `json:"writes"` // writes that surely happened
}

// Check decides a history: the workload first (no verdict on a history
// that tested little), then each part of the model (convergence and
// values, reloads, expiry), each adding the keys that broke it, then the
// verdict, which unknown observations and sessions left down can change.
func Check(h History) Result {
	if r, unmet := workload(h); unmet {
		return r
	}
	c := &checker{h: h, touched: map[string][]int{}, judged: map[string]bool{}}
	for _, op := range h.Ops {
		if op.Key != "" {
			c.touched[op.Table+"/"+op.Key] = append(c.touched[op.Table+"/"+op.Key], op.ID)
		}
	}
	c.convergence()
	c.reloads()
	c.expiry()
	return c.verdict(unknowns(h))
}

// workload is an INCONCLUSIVE result (and true) when the history cannot
// be judged: a final table unread, no write that succeeded, or a kind of
// write that mostly failed (faults fail some writes; most failing is
// harp's problem or the setup's, and the history would test little).
func workload(h History) (Result, bool) {
	if len(h.Unreadable) > 0 {
		var ns []string
		for n, why := range h.Unreadable {
			ns = append(ns, n+" ("+why+")")
		}
		sort.Strings(ns)
		return Result{Verdict: "INCONCLUSIVE", Reason: "the final tables of " + strings.Join(ns, ", ") + " could not be read"}, true
	}
	if writes(h) == 0 {
		return Result{Verdict: "INCONCLUSIVE", Reason: "no write succeeded: the history shows nothing"}, true
	}
	for _, kind := range []string{SetCLI, IncHTTP} {
		tried, ok := 0, 0
		for _, op := range h.Ops {
			if op.Kind == kind {
				tried++
				if op.OK {
					ok++
				}
			}
		}
		if tried >= 20 && 2*ok < tried {
			return Result{Verdict: "INCONCLUSIVE", Reason: fmt.Sprintf("only %d of %d %s writes succeeded: the workload mostly failed", ok, tried, map[string]string{SetCLI: "CLI", IncHTTP: "traffic"}[kind])}, true
		}
	}
	return Result{}, false
}

// writes counts the writes that surely happened.
func writes(h History) int {
	n := 0
	for _, op := range h.Ops {
		if (op.Kind == SetCLI || op.Kind == IncHTTP) && op.OK {
			n++
		}
	}
	return n
}

// checker gathers the violations of one history, key by key.
type checker struct {
	h       History
	touched map[string][]int // table/key -> the operations that touched it
	judged  map[string]bool  // table/key
	keys    int              // owned keys surely written
	vs      []Violation
}

func (c *checker) add(table, key, what string) {
	c.vs = append(c.vs, Violation{Key: table + "/" + key, What: what, Ops: c.touched[table+"/"+key]})
}

// convergence: in the main table, after healing and the quiet period,
// every node holds one value, one the owner's writes in order can leave;
// no key appears that no write produced.
func (c *checker) convergence() {
	h := c.h
	for _, n := range h.Nodes {
		for k := range h.Final[n][h.Main] {
			if _, owned := h.Owners[k]; !owned {
				c.judged[h.Main+"/"+k] = true
				c.add(h.Main, k, fmt.Sprintf("on %s, but no write produced it", n))
			}
		}
	}
	for _, k := range sortedKeys(h.Owners) {
		m := replay(h, k)
		if !m.wrote {
			continue // never surely written: absence says nothing
		}
		c.keys++
		c.judged[h.Main+"/"+k] = true
		if what := c.value(k, m); what != "" {
			c.add(h.Main, k, what)
		}
	}
}

// value is how one owned key broke the model ("" when it did not).
func (c *checker) value(k string, m model) string {
	h := c.h
	held := map[string]string{}
	var vals []string
	for _, n := range h.Nodes {
		e, ok := h.Final[n][h.Main][k]
		v := "missing"
		if ok {
			v = fmt.Sprint(e.GPC0)
		}
		held[n] = v
		vals = append(vals, n+"="+v)
	}
	distinct := map[string]bool{}
	for _, v := range held {
		distinct[v] = true
	}
	in := func(vs values, v string) bool {
		if v == "missing" {
			return vs.absent
		}
		var x int64
		fmt.Sscan(v, &x)
		return vs.has(x)
	}
	switch first := held[h.Nodes[0]]; {
	case !m.converges:
		// After a restart, each node keeps what it was pushed or
		// taught: only the values are held to the writes.
		var wrong []string
		for _, n := range h.Nodes {
			if !in(m.any, held[n]) {
				wrong = append(wrong, n+"="+held[n])
			}
		}
		if len(wrong) > 0 {
			return fmt.Sprintf("%s: no prefix of the owner's writes leaves that (possible after %s: %s)", strings.Join(wrong, " "), m.restart, m.any)
		}
	case len(distinct) > 1:
		if h.Mesh != nil && h.Mesh.Settled != "" {
			return fmt.Sprintf("diverged after healing, with nothing left in flight (%s into the quiet): %s", h.Mesh.Settled, strings.Join(vals, " "))
		}
		return "diverged after healing and the quiet period: " + strings.Join(vals, " ")
	case first == "missing" && !m.final.absent:
		return "written (and acknowledged) by its owner, missing on every node"
	case !in(m.final, first):
		return fmt.Sprintf("every node holds gpc0=%s, which the owner's writes in order cannot leave (possible: %s)", first, m.final)
	}
	return ""
}

// reloads: a node's new worker holds every key its old one held, judged
// only on reloads whose two reads both gave the node's keys.
func (c *checker) reloads() {
	h := c.h
	for _, op := range h.Ops {
		if op.Kind != Reload || !op.OK || op.Unmet != "" {
			continue
		}
		before, ok1 := op.Before.Get()
		afterKeys, ok2 := op.After.Get()
		if !ok1 || !ok2 {
			continue
		}
		after := map[string]bool{}
		for _, k := range afterKeys {
			after[k] = true
		}
		for _, k := range before {
			c.judged[h.Main+"/"+k] = true
			if !after[k] {
				c.add(h.Main, k, fmt.Sprintf("held by %s before its reload (op %d, resync finished) and not by its new worker", op.Node, op.ID))
			}
		}
	}
}

// expiry: no entry has more time left than its table's expire, and none
// outlives it after its last write.
func (c *checker) expiry() {
	h := c.h
	last := map[string]time.Time{}
	for _, op := range h.Ops {
		if op.Key != "" && (op.Kind == SetCLI || op.Kind == IncHTTP) {
			if t := latest(h, op); t.After(last[op.Table+"/"+op.Key]) {
				last[op.Table+"/"+op.Key] = t
			}
		}
	}
	for _, n := range h.Nodes {
		for _, t := range sortedKeys(h.Final[n]) {
			expire := time.Duration(h.Tables[t]) * time.Millisecond
			if expire == 0 {
				continue
			}
			for _, k := range sortedKeys(h.Final[n][t]) {
				c.judged[t+"/"+k] = true
				e := h.Final[n][t][k]
				if left := time.Duration(e.ExpMS) * time.Millisecond; left > expire+expSlack {
					c.add(t, k, fmt.Sprintf("on %s: %s left, beyond the table's expire of %s", n, left, expire))
				}
				if w, ok := last[t+"/"+k]; ok && h.FinalAt.Sub(w) > expire+OutlivedAfter {
					c.add(t, k, fmt.Sprintf("on %s %s after its last write: it outlived the table's expire of %s", n, h.FinalAt.Sub(w).Round(100*time.Millisecond), expire))
				}
			}
		}
	}
}

// verdict: unknown observations make the history INCONCLUSIVE whatever
// broke; otherwise any violation is REPRODUCED, and so are sessions left
// down on links harp healed and saw clear.
func (c *checker) verdict(unknown []string) Result {
	h, vs := c.h, c.vs
	sort.SliceStable(vs, func(i, j int) bool { return vs[i].Key < vs[j].Key })
	r := Result{Violations: vs, Keys: c.keys, Writes: writes(h)}
	byKey := map[string]bool{}
	for _, v := range vs {
		byKey[v.Key] = true
		c.judged[v.Key] = true
	}
	broke := ""
	if len(vs) > 0 {
		broke = fmt.Sprintf("%d of %d keys broke the model; first: %s: %s", len(byKey), len(c.judged), vs[0].Key, vs[0].What)
	}
	switch {
	case len(unknown) > 0:
		r.Verdict, r.Reason = "INCONCLUSIVE", unknown[0]
		if len(unknown) > 1 {
			r.Reason += fmt.Sprintf(" (and %d more)", len(unknown)-1)
		}
		if broke != "" {
			r.Reason += "; what it shows proves nothing: " + broke
		}
	case len(vs) == 0:
		r.Verdict, r.Reason = "PASS", fmt.Sprintf("%d keys on %d nodes converged to what their owners wrote (%d writes); expiry and reloads kept the model", r.Keys, len(h.Nodes), r.Writes)
	default:
		r.Verdict, r.Reason = "REPRODUCED", broke
	}
	if d, ok := h.meshDown(); ok && r.Verdict != "INCONCLUSIVE" {
		// harp healed every link and the link proxy showed them clear:
		// sessions still down are HAProxy's doing, and a violation of the
		// convergence promised: a correct build reconnects within its 5 s
		// reconnect timeout and a collision's backoff, well inside the wait.
		down := fmt.Sprintf("sessions %s were still not established %s after every fault was healed (the link proxy showed every link clear)", IDs(d, 5), h.Mesh.Waited)
		if r.Verdict == "PASS" {
			r.Verdict, r.Reason = "REPRODUCED", down+"; the tables themselves converged: "+r.Reason
		} else {
			r.Reason += "; " + down
		}
	}
	return r
}

// unknowns are the reasons a history proves nothing: a fault harp could
// not heal, or an observation it could not make (obs.Unknowns, the one
// shared rule, applied to the whole history).
func unknowns(h History) []string {
	var out []string
	var final *Op
	for i, op := range h.Ops {
		if op.Kind == Heal && op.Detail == HealEverything {
			final = &h.Ops[i]
		}
	}
	switch {
	case final != nil && !final.OK:
		out = append(out, fmt.Sprintf("harp could not heal every fault after the run (op %d): %s", final.ID, final.Err))
	case h.Mesh == nil || final == nil:
		// A history from before heals were verified: its final heal
		// recorded success whatever happened (or there is none), so a
		// fault's failed heal may never have been redone (a worker left
		// paused).
		for _, op := range h.Ops {
			if op.Kind == Heal && !op.OK {
				out = append(out, fmt.Sprintf("harp could not heal a fault (op %d, %s): %s, and this history does not show it healed after", op.ID, op.Detail, op.Err))
				break
			}
		}
	}
	if h.Mesh != nil {
		if f, ok := h.Mesh.Faulted.Get(); ok && len(f) > 0 {
			out = append(out, fmt.Sprintf("after harp healed every fault the link proxy still showed %s: harp's heal did not take", IDs(f, 5)))
		}
		if why := h.Mesh.Faulted.Unknown(); h.Mesh.Faulted.State != "" && why != "" {
			out = append(out, "harp could not read the links' state after healing: "+why)
		}
		if why := h.Mesh.Down.Unknown(); why != "" {
			out = append(out, "harp could not read the peer sessions after healing: "+why)
		}
	}
	for _, op := range h.Ops {
		for _, r := range []struct {
			when string
			o    obs.Optional[[]string]
		}{{"before", op.Before}, {"after", op.After}} {
			if r.o.State != "" && r.o.Unknown() != "" {
				out = append(out, fmt.Sprintf("%s's keys %s its reload (op %d) could not be read: %s", op.Node, r.when, op.ID, r.o.Unknown()))
			}
		}
	}
	if len(out) == 0 {
		// The shared rule covers what the checker does not name.
		if u := obs.Unknowns(h); len(u) > 0 {
			out = append(out, obs.Reason(u))
		}
	}
	return out
}

// meshDown is the sessions HAProxy left down though every link was clear.
func (h History) meshDown() ([]string, bool) {
	if h.Mesh == nil {
		return nil, false
	}
	d, ok := h.Mesh.Down.Get()
	if f, clear := h.Mesh.Faulted.Get(); !ok || len(d) == 0 || (h.Mesh.Faulted.State != "" && (!clear || len(f) > 0)) {
		return nil, false
	}
	return d, true
}

// latest is the last time a write may have taken effect: its end when
// harp saw it succeed; a failed one may run late, when its node resumed
// (the first heal on its node, or the final heal, after it ended).
func latest(h History, op Op) time.Time {
	t := op.End
	if op.OK {
		return t
	}
	for _, o := range h.Ops {
		if o.Kind == Heal && (o.Node == op.Node || o.Detail == HealEverything) && !o.End.Before(op.End) {
			return o.End
		}
	}
	return t
}

// model is what the owner's writes of a key allow at the end.
type model struct {
	final     values
	wrote     bool   // a write surely happened
	any       values // every state the writes went through: what a node may keep when the key need not converge
	converges bool   // every node must hold the same value
	restart   string // the last restart, when it keeps a key from having to converge
}

// replay runs the owner's writes of key k (in the main table) and its
// restarts in order, as the model in this file's comment says.
func replay(h History, k string) model {
	owner := h.Owners[k]
	type event struct {
		at      time.Time
		op      *Op
		restart *Op
		reload  *Op
	}
	var evs []event
	for i, op := range h.Ops {
		switch {
		case op.Key == k && op.Table == h.Main && (op.Kind == SetCLI || op.Kind == IncHTTP):
			evs = append(evs, event{at: op.Start, op: &h.Ops[i]})
		case op.Kind == Fault && faultKind(op) == "restart":
			evs = append(evs, event{at: op.Start, restart: &h.Ops[i]})
		case op.Kind == Reload:
			evs = append(evs, event{at: op.Start, reload: &h.Ops[i]})
		}
	}
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].at.Before(evs[j].at) })
	m := model{}
	P := values{absent: true} // the key's value now (absent before any write)
	var D values              // values of failed sets that may still land
	F := 0                    // failed incs that may still land
	hist := values{}          // every state so far: what a peer may have been pushed, or taught
	var J values              // after the owner's restart until its resync finished: what the teach may bring back
	var W time.Time           // that resync's end (far future: it never finished)
	jOpen := false
	var cW time.Time // the last restart's resync end: an OK write after it makes every node converge again
	slot := func(t time.Time) {
		if jOpen {
			P = P.union(J)
			if !t.Before(W) {
				jOpen = false
			}
		}
		P = P.union(D)
		hist = hist.union(P.plus(F))
		if jOpen {
			J = J.union(P.plus(F))
		}
	}
	for _, e := range evs {
		slot(e.at)
		if r := e.reload; r != nil {
			if r.Node != owner {
				continue // the reloaded peer's new worker is taught what its old one held; the owner pushes the rest
			}
			// The owner's reload keeps its own entries (its new worker is
			// taught them; the reload's own check judges that), but what
			// its old process had not yet pushed to a peer goes with it:
			// as after a restart, the key must converge again only once
			// the owner writes it after its new worker is up (a reload
			// harp did not see end: never, in this history).
			end := r.End
			if !r.OK {
				end = time.Unix(1<<40, 0)
			}
			if end.After(cW) {
				cW = end
			}
			m.converges = false
			m.restart = fmt.Sprintf("%s's reload (op %d)", r.Node, r.ID)
			continue
		}
		if r := e.restart; r != nil {
			end := r.End
			if !r.OK || !strings.Contains(r.Detail, "resync finished") {
				end = time.Unix(1<<40, 0)
			}
			if end.After(cW) {
				cW = end
			}
			// The restarted node learns the key from the peer that
			// teaches it, which may hold an older state, and the owner
			// pushes it only its later writes.
			m.converges = false
			m.restart = fmt.Sprintf("%s's restart (op %d)", r.Node, r.ID)
			if r.Node == owner {
				// What was not pushed is gone, pending writes died with
				// the process; the owner holds what some peer was pushed.
				J, P, D, F = hist, hist, values{}, 0
				W, jOpen = end, true
			}
			continue
		}
		op := e.op
		switch {
		case op.OK && op.Kind == SetCLI:
			P = one(op.Value)
		case op.OK:
			P = P.inc()
		case op.Kind == SetCLI:
			D = D.union(one(op.Value))
		default:
			F++
		}
		if op.OK {
			m.wrote = true
			if !op.Start.Before(cW) {
				m.converges, m.restart = true, ""
			}
		}
	}
	slot(time.Unix(1<<40, 0))
	m.final, m.any = P.plus(F), hist
	return m
}

// faultKind is a fault op's kind, from its Detail (event.String).
func faultKind(op Op) string {
	if f := strings.Fields(op.Detail); len(f) > 1 {
		return f[1]
	}
	return ""
}

// values is a set of gpc0 values a key may hold: disjoint sorted spans,
// and whether the key may be absent.
type values struct {
	absent bool
	spans  []span
}

type span struct{ lo, hi int64 }

func one(v int64) values { return values{spans: []span{{v, v}}} }

func (v values) has(x int64) bool {
	for _, s := range v.spans {
		if s.lo <= x && x <= s.hi {
			return true
		}
	}
	return false
}

func (v values) union(o values) values {
	all := append(append([]span(nil), v.spans...), o.spans...)
	sort.Slice(all, func(i, j int) bool { return all[i].lo < all[j].lo })
	out := values{absent: v.absent || o.absent}
	for _, s := range all {
		if n := len(out.spans); n > 0 && s.lo <= out.spans[n-1].hi+1 {
			out.spans[n-1].hi = max(out.spans[n-1].hi, s.hi)
			continue
		}
		out.spans = append(out.spans, s)
	}
	return out
}

// inc is one increment: an absent key is created at 0, then counted.
func (v values) inc() values {
	out := values{}
	for _, s := range v.spans {
		out.spans = append(out.spans, span{s.lo + 1, s.hi + 1})
	}
	if v.absent {
		out = out.union(one(1))
	}
	return out
}

// plus is up to n more increments.
func (v values) plus(n int) values {
	if n == 0 {
		return v
	}
	out := values{absent: v.absent}
	for _, s := range v.spans {
		out.spans = append(out.spans, span{s.lo, s.hi + int64(n)})
	}
	if v.absent {
		out.spans = append(out.spans, span{1, int64(n)})
	}
	return out.union(values{})
}

func (v values) String() string {
	var s []string
	if v.absent {
		s = append(s, "absent")
	}
	for i, sp := range v.spans {
		if i == 8 {
			s = append(s, "...")
			break
		}
		if sp.lo == sp.hi {
			s = append(s, fmt.Sprint(sp.lo))
		} else {
			s = append(s, fmt.Sprintf("%d..%d", sp.lo, sp.hi))
		}
	}
	return strings.Join(s, ", ")
}

// IDs lists up to n items and how many more: a report line stays short
// whatever touched a key.
func IDs[T any](items []T, n int) string {
	var s []string
	for i, it := range items {
		if i == n {
			s = append(s, fmt.Sprintf("and %d more", len(items)-n))
			break
		}
		s = append(s, fmt.Sprint(it))
	}
	return strings.Join(s, ", ")
}

// sortedKeys lists a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

package chaos

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// The model the checker holds HAProxy to (doc/peers-v2.0.txt and what the
// builds do): a node pushes its own updates to every peer over one session
// each, in the order it made them, and a receiver applies what it gets in
// that order, last write winning; an entry learned is pushed on like a
// local one. There is no conflict resolution between writers, so every key
// has one writer (its owner). Hence, once faults are healed and the
// cluster is quiet:
//   - every node holds every key the same (convergence);
//   - that value is what the owner's writes, in the owner's order, leave
//     (a write whose result harp did not see may or may not count);
//   - no entry's time left exceeds its table's expire, and no entry
//     outlives it (last write + expire has passed: gone everywhere);
//   - a reload taken with the node's resync finished loses no key the
//     node held (its new worker learns them all).

// Slack for timers: show table rounds, and harp's clock is not HAProxy's.
const (
	expSlack      = time.Second
	outlivedAfter = 2 * time.Second
	maxPossible   = 256 // beyond this many possible values, a key's value is not checked
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

// Check decides a history.
func Check(h History) Result {
	r := Result{}
	if len(h.Unreadable) > 0 {
		var ns []string
		for n, why := range h.Unreadable {
			ns = append(ns, n+" ("+why+")")
		}
		sort.Strings(ns)
		return Result{Verdict: "INCONCLUSIVE", Reason: "the final tables of " + strings.Join(ns, ", ") + " could not be read"}
	}
	touched := map[string][]int{} // table/key -> op ids
	for _, op := range h.Ops {
		if op.Key != "" {
			touched[op.Table+"/"+op.Key] = append(touched[op.Table+"/"+op.Key], op.ID)
		}
		if (op.Kind == SetCLI || op.Kind == IncHTTP) && op.OK {
			r.Writes++
		}
	}
	if r.Writes == 0 {
		return Result{Verdict: "INCONCLUSIVE", Reason: "no write succeeded: the history shows nothing"}
	}
	// The workload must have done what it meant: faults fail some writes,
	// but a kind of write that mostly failed is harp's problem (or the
	// setup's), and the history would test little of it.
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
			return Result{Verdict: "INCONCLUSIVE", Reason: fmt.Sprintf("only %d of %d %s writes succeeded: the workload mostly failed", ok, tried, map[string]string{SetCLI: "CLI", IncHTTP: "traffic"}[kind])}
		}
	}
	var vs []Violation
	add := func(table, key, what string) {
		vs = append(vs, Violation{Key: table + "/" + key, What: what, Ops: touched[table+"/"+key]})
	}
	// Convergence and values, in the main table.
	keys := map[string]bool{}
	for k := range h.Owners {
		keys[k] = true
	}
	for _, n := range h.Nodes {
		for k := range h.Final[n][h.Main] {
			if _, owned := h.Owners[k]; !owned {
				add(h.Main, k, fmt.Sprintf("on %s, but no write produced it", n))
			}
		}
	}
	for _, k := range sortedKeys(keys) {
		possible, wrote := possibleValues(h, k)
		if !wrote {
			continue // never surely written: absence says nothing
		}
		r.Keys++
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
		switch {
		case len(distinct) > 1:
			add(h.Main, k, "diverged after healing and the quiet period: "+strings.Join(vals, " "))
		case held[h.Nodes[0]] == "missing":
			add(h.Main, k, "written (and acknowledged) by its owner, missing on every node")
		case possible != nil:
			var v int64
			fmt.Sscan(held[h.Nodes[0]], &v)
			if !possible[v] {
				add(h.Main, k, fmt.Sprintf("every node holds gpc0=%d, which the owner's writes in order cannot leave (possible: %s)", v, list(possible)))
			}
		}
	}
	// Reloads.
	for _, op := range h.Ops {
		if op.Kind != Reload || !op.OK || op.Unmet != "" {
			continue
		}
		after := map[string]bool{}
		for _, k := range op.After {
			after[k] = true
		}
		for _, k := range op.Before {
			if !after[k] {
				add(h.Main, k, fmt.Sprintf("held by %s before its reload (op %d, resync finished) and not by its new worker", op.Node, op.ID))
			}
		}
	}
	// Expiry.
	last := map[string]time.Time{}
	for _, op := range h.Ops {
		if op.Key != "" && (op.Kind == SetCLI || op.Kind == IncHTTP) && op.End.After(last[op.Table+"/"+op.Key]) {
			last[op.Table+"/"+op.Key] = op.End
		}
	}
	for _, n := range h.Nodes {
		for _, t := range sortedKeys(h.Final[n]) {
			expire := time.Duration(h.Tables[t]) * time.Millisecond
			if expire == 0 {
				continue
			}
			for _, k := range sortedKeys(h.Final[n][t]) {
				e := h.Final[n][t][k]
				if left := time.Duration(e.ExpMS) * time.Millisecond; left > expire+expSlack {
					add(t, k, fmt.Sprintf("on %s: %s left, beyond the table's expire of %s", n, left, expire))
				}
				if w, ok := last[t+"/"+k]; ok && h.FinalAt.Sub(w) > expire+outlivedAfter {
					add(t, k, fmt.Sprintf("on %s %s after its last write: it outlived the table's expire of %s", n, h.FinalAt.Sub(w).Round(100*time.Millisecond), expire))
				}
			}
		}
	}
	if len(vs) == 0 {
		r.Verdict, r.Reason = "PASS", fmt.Sprintf("%d keys on %d nodes converged to what their owners wrote (%d writes); expiry and reloads kept the model", r.Keys, len(h.Nodes), r.Writes)
		return r
	}
	sort.SliceStable(vs, func(i, j int) bool { return vs[i].Key < vs[j].Key })
	r.Violations = vs
	byKey := map[string]bool{}
	for _, v := range vs {
		byKey[v.Key] = true
	}
	r.Verdict = "REPRODUCED"
	r.Reason = fmt.Sprintf("%d of %d keys broke the model; first: %s: %s", len(byKey), r.Keys, vs[0].Key, vs[0].What)
	return r
}

// possibleValues replays the owner's writes of key k in their order:
// the values the key may hold at the end (nil: too uncertain to check),
// and whether any write surely happened.
func possibleValues(h History, k string) (map[int64]bool, bool) {
	var ops []Op
	for _, op := range h.Ops {
		if op.Key == k && op.Table == h.Main && (op.Kind == SetCLI || op.Kind == IncHTTP) {
			ops = append(ops, op)
		}
	}
	sort.SliceStable(ops, func(i, j int) bool { return ops[i].Start.Before(ops[j].Start) })
	possible := map[int64]bool{0: true} // an entry an inc creates starts at 0
	wrote := false
	for _, op := range ops {
		next := map[int64]bool{}
		for v := range possible {
			if !op.OK {
				next[v] = true // it may not have happened
			}
			switch op.Kind {
			case SetCLI:
				next[op.Value] = true
			case IncHTTP:
				next[v+1] = true
			}
		}
		wrote = wrote || op.OK
		possible = next
		if len(possible) > maxPossible {
			return nil, wrote
		}
	}
	return possible, wrote
}

func list(m map[int64]bool) string {
	var vs []int64
	for v := range m {
		vs = append(vs, v)
	}
	sort.Slice(vs, func(i, j int) bool { return vs[i] < vs[j] })
	var s []string
	for i, v := range vs {
		if i == 8 {
			s = append(s, "...")
			break
		}
		s = append(s, fmt.Sprint(v))
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

// Package chaos records randomized histories of a peers cluster (writes
// through the CLI and through traffic, reloads, link and process faults
// chosen from a seed) and checks them against a model of what the peers
// protocol guarantees. History and Check are plain values and a pure
// function: `harp rejudge` re-runs the checker on a stored history.
package chaos

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/harp-project/harp/harness/core/obs"
)

// Operation kinds.
const (
	SetCLI    = "set"    // set table <t> key <k> data.gpc0 <v> on the key's owner
	IncHTTP   = "inc"    // an HTTP request tracking the key (sc-inc-gpc0) on its owner
	Reload    = "reload" // SIGUSR2 to a node, its keys read before and after
	Fault     = "fault"  // a fault applied (Detail says which)
	Heal      = "heal"   // that fault removed (Detail "everything": the final heal)
	FinalRead = "final"  // show table of every node after healing and a quiet period
)

// Kinds are the operation kinds a history may hold.
var Kinds = []string{SetCLI, IncHTTP, Reload, Fault, Heal, FinalRead}

// HealEverything is the Detail of the final heal, after the run.
const HealEverything = "everything"

// Op is one operation of the history.
type Op struct {
	ID     int       `json:"id"`
	Kind   string    `json:"kind"`
	Node   string    `json:"node"`
	Table  string    `json:"table,omitempty"`
	Key    string    `json:"key,omitempty"`
	Value  int64     `json:"value,omitempty"` // set: the value written
	Start  time.Time `json:"start"`
	End    time.Time `json:"end"`
	OK     bool      `json:"ok"`              // it surely happened
	Err    string    `json:"error,omitempty"` // why it may not have (an inc that timed out may still count)
	Detail string    `json:"detail,omitempty"`
	// Reload: the node's keys of the main table before the reload (its
	// resync finished) and once the new worker's resync finished, each a
	// read that may have failed (then the reload proves nothing); Unmet
	// when a resync did not finish (the same).
	Before obs.Optional[[]string] `json:"before,omitzero"`
	After  obs.Optional[[]string] `json:"after,omitzero"`
	Unmet  string                 `json:"unmet,omitempty"`
}

// UnmarshalJSON also reads histories from before typed reads, whose
// before/after were plain lists: a list is what the node held, and an
// absent after of a reload that succeeded is unknown (the old harp wrote
// nothing both for an empty table and for a read that failed, #23).
func (op *Op) UnmarshalJSON(data []byte) error {
	type plain Op
	var raw struct {
		plain
		Before json.RawMessage `json:"before"`
		After  json.RawMessage `json:"after"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	*op = Op(raw.plain)
	old := false
	for _, f := range []struct {
		raw json.RawMessage
		to  *obs.Optional[[]string]
	}{{raw.Before, &op.Before}, {raw.After, &op.After}} {
		switch s := strings.TrimSpace(string(f.raw)); {
		case s == "" || s == "null":
		case s[0] == '[':
			var ks []string
			if err := json.Unmarshal(f.raw, &ks); err != nil {
				return err
			}
			f.to.Of, old = obs.Value(ks), true
		default:
			if err := json.Unmarshal(f.raw, &f.to.Of); err != nil {
				return err
			}
		}
	}
	if ks, _ := op.Before.Get(); op.Kind == Reload && op.OK && op.After.State == "" && (old || len(ks) > 0) {
		op.After.Of = obs.Failure[[]string]("not recorded (a history from before typed reads: the read may have failed)")
	}
	return nil
}

// Entry is one key of a node's final table.
type Entry struct {
	GPC0  int64 `json:"gpc0"`
	ExpMS int64 `json:"exp_ms"` // show table's exp=: ms left
}

// Mesh is what harp saw once it had healed everything, before the quiet
// period and the final read: the links the link proxy still shows faulted
// (a toxic, or down), and the peer sessions show peers lists as not
// established when harp stopped waiting for them. Either read may fail
// (unknown). Histories from before heals were verified have none.
type Mesh struct {
	At      time.Time              `json:"at"`
	Faulted obs.Optional[[]string] `json:"faulted,omitzero"` // never made: the cluster has no links
	Down    obs.Of[[]string]       `json:"down"`
	Waited  string                 `json:"waited,omitempty"` // how long harp waited for the sessions
	// Settled: the quiet period ended early, the nodes disagreeing, once
	// nothing could change the main table any more (drive's settled): how
	// long into the quiet. Empty: the nodes agreed, or the quiet ran out.
	Settled string `json:"settled,omitempty"`
}

// History is a chaos run: its setup, its operations and what every node
// held at the end.
type History struct {
	Seed     int64             `json:"seed"`
	Nodes    []string          `json:"nodes"`
	Owners   map[string]string `json:"owners"` // key -> the only node that writes it
	Tables   map[string]int64  `json:"tables"` // table -> expire, ms
	Main     string            `json:"main"`   // the table checked for convergence
	Schedule []string          `json:"schedule"`
	Ops      []Op              `json:"ops"`
	Mesh     *Mesh             `json:"mesh,omitempty"`
	// Final: node -> table -> key -> entry, read at FinalAt.
	Final   map[string]map[string]map[string]Entry `json:"final"`
	FinalAt time.Time                              `json:"final_at"`
	// Unreadable names nodes whose final tables could not be read.
	Unreadable map[string]string `json:"unreadable,omitempty"`
}

// Save writes the history as JSON.
func (h History) Save(path string) error {
	data, err := json.MarshalIndent(h, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// MaxBytes bounds a history file (or a trials.json holding histories)
// harp reads: a 10 min history of 9 nodes is some tens of MB.
const MaxBytes = 512 << 20

// ReadFile reads a file of at most MaxBytes.
func ReadFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxBytes+1))
	if err == nil && len(data) > MaxBytes {
		err = fmt.Errorf("%s: over %d MiB, not a history harp wrote", path, MaxBytes>>20)
	}
	return data, err
}

// Load reads a history Save wrote, and validates it.
func Load(path string) (History, error) {
	var h History
	data, err := ReadFile(path)
	if err != nil {
		return h, err
	}
	if err := json.Unmarshal(data, &h); err != nil {
		return h, fmt.Errorf("%s: not a chaos history: %v", path, err)
	}
	if err := h.Validate(); err != nil {
		return h, fmt.Errorf("%s: %w", path, err)
	}
	return h, nil
}

// Validate checks that a history is one the checker can judge: every
// operation of a known kind on a known node, table and owned key, the
// final tables those of the nodes. A history that fails it was not
// written by harp chaos (or was edited): judging it would count nonsense.
func (h History) Validate() error {
	var errs []string
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Sprintf(format, args...))
	}
	nodes := map[string]bool{}
	for _, n := range h.Nodes {
		if n == "" || nodes[n] {
			bad("node %q empty or listed twice", n)
		}
		nodes[n] = true
	}
	if len(h.Nodes) == 0 {
		bad("no nodes")
	}
	if _, ok := h.Tables[h.Main]; !ok {
		bad("main table %q is not among the tables %v", h.Main, sortedKeys(h.Tables))
	}
	for t, ms := range h.Tables {
		if t == "" || ms < 0 {
			bad("table %q: expire %d ms", t, ms)
		}
	}
	for k, n := range h.Owners {
		if k == "" || !nodes[n] {
			bad("owner of %q: %q is not a node of the history", k, n)
		}
	}
	ids := map[int]bool{}
	for i, op := range h.Ops {
		where := fmt.Sprintf("op %d", op.ID)
		if op.ID <= 0 {
			where = fmt.Sprintf("operation #%d (id %d)", i+1, op.ID)
			bad("%s: an id must be positive", where)
		} else if ids[op.ID] {
			bad("op %d twice", op.ID)
		}
		ids[op.ID] = true
		if !slices.Contains(Kinds, op.Kind) {
			bad("%s: unknown kind %q (want one of %s)", where, op.Kind, strings.Join(Kinds, ", "))
			continue
		}
		switch {
		case op.Node != "" && !nodes[op.Node]:
			bad("%s: node %q is not a node of the history", where, op.Node)
		case op.Node == "" && op.Kind != Heal && op.Kind != FinalRead:
			bad("%s: a %s names no node", where, op.Kind)
		}
		if !op.Start.IsZero() && !op.End.IsZero() && op.End.Before(op.Start) {
			bad("%s: ends before it starts", where)
		}
		if op.Kind == SetCLI || op.Kind == IncHTTP {
			if _, ok := h.Tables[op.Table]; !ok {
				bad("%s: table %q is not among the tables", where, op.Table)
			}
			if op.Key == "" {
				bad("%s: a write without a key", where)
			}
			if o, ok := h.Owners[op.Key]; op.Table == h.Main && (!ok || o != op.Node) {
				if !ok {
					bad("%s: key %q has no owner", where, op.Key)
				} else {
					bad("%s: key %q is owned by %s, written by %s (one writer a key)", where, op.Key, o, op.Node)
				}
			}
			if op.Value < 0 {
				bad("%s: value %d", where, op.Value)
			}
		}
	}
	for _, n := range sortedKeys(h.Final) {
		if !nodes[n] {
			bad("final tables of %q, which is not a node of the history", n)
			continue
		}
		for _, t := range sortedKeys(h.Final[n]) {
			if _, ok := h.Tables[t]; !ok {
				bad("%s: final table %q is not among the tables", n, t)
			}
			for k, e := range h.Final[n][t] {
				if k == "" || e.GPC0 < 0 || e.ExpMS < 0 {
					bad("%s: final %s/%q: gpc0 %d, exp %d ms", n, t, k, e.GPC0, e.ExpMS)
				}
			}
		}
	}
	for _, n := range h.Nodes {
		if _, unread := h.Unreadable[n]; unread {
			continue
		}
		if _, ok := h.Final[n][h.Main]; !ok {
			bad("%s: no final tables (and not listed unreadable)", n)
		}
	}
	for n := range h.Unreadable {
		if !nodes[n] {
			bad("unreadable %q is not a node of the history", n)
		}
	}
	if h.FinalAt.IsZero() {
		bad("no final read (final_at)")
	}
	switch {
	case len(errs) == 0:
		return nil
	case len(errs) > 5:
		errs = append(errs[:5], fmt.Sprintf("and %d more problems", len(errs)-5))
	}
	return fmt.Errorf("not a history harp chaos wrote: %s", strings.Join(errs, "; "))
}

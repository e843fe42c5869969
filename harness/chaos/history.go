// Package chaos records randomized histories of a peers cluster (writes
// through the CLI and through traffic, reloads, link and process faults
// chosen from a seed) and checks them against a model of what the peers
// protocol guarantees. History and Check are plain values and a pure
// function: `harp check` re-runs the checker on a stored history.
package chaos

import (
	"encoding/json"
	"fmt"
	"os"
	"time"
)

// Operation kinds.
const (
	SetCLI    = "set"    // set table <t> key <k> data.gpc0 <v> on the key's owner
	IncHTTP   = "inc"    // an HTTP request tracking the key (sc-inc-gpc0) on its owner
	Reload    = "reload" // SIGUSR2 to a node, its keys read before and after
	Fault     = "fault"  // a fault applied (Detail says which)
	Heal      = "heal"   // that fault removed
	FinalRead = "final"  // show table of every node after healing and a quiet period
)

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
	// resync finished) and once the new worker's resync finished; Unmet
	// when a resync did not finish (then the reload proves nothing).
	Before []string `json:"before,omitempty"`
	After  []string `json:"after,omitempty"`
	Unmet  string   `json:"unmet,omitempty"`
}

// Entry is one key of a node's final table.
type Entry struct {
	GPC0  int64 `json:"gpc0"`
	ExpMS int64 `json:"exp_ms"` // show table's exp=: ms left
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

// Load reads a history Save wrote.
func Load(path string) (History, error) {
	var h History
	data, err := os.ReadFile(path)
	if err != nil {
		return h, err
	}
	if err := json.Unmarshal(data, &h); err != nil {
		return h, fmt.Errorf("%s: not a chaos history: %v", path, err)
	}
	if len(h.Nodes) == 0 || h.Main == "" {
		return h, fmt.Errorf("%s: a history without nodes or main table", path)
	}
	return h, nil
}

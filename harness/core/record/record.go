// Package record holds what a run keeps of harp's own actions, as values
// that verdicts and reports carry: one runtime CLI exchange, a transcript
// of them, and a fault the nemesis injected on harp's side. It is core: the
// standard library only, no socket, no Docker (harness/live/cli makes the
// exchanges, harness/live/nemesis the faults).
package record

import (
	"sync"
	"time"
)

// Exchange is one runtime CLI command and its answer, kept for reports.
type Exchange struct {
	At      time.Time `json:"at"`
	Target  string    `json:"target"` // master, stats, or worker <pid>
	Command string    `json:"command"`
	Output  string    `json:"output"`
	Err     string    `json:"error,omitempty"`
}

// Transcript is exchanges in the order they happened. Safe for concurrent
// use.
type Transcript struct {
	mu  sync.Mutex
	all []Exchange
}

// Add appends an exchange.
func (l *Transcript) Add(e Exchange) {
	l.mu.Lock()
	l.all = append(l.all, e)
	l.mu.Unlock()
}

// Mark is the current length, to slice one trial's exchanges (see Since).
func (l *Transcript) Mark() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.all)
}

// Since returns the exchanges from index from (a Mark) on.
func (l *Transcript) Since(from int) []Exchange {
	l.mu.Lock()
	defer l.mu.Unlock()
	if from > len(l.all) {
		from = len(l.all)
	}
	return append([]Exchange(nil), l.all[from:]...)
}

// HarnessFault is one fault the nemesis injected into harp's own side.
type HarnessFault struct {
	At     time.Time `json:"at"`
	Kind   string    `json:"kind"` // cli-timeout, cli-close, cli-lost, cli-late, raw-close, raw-late, raw-cut, dial-fail, read-end, read-late, peer-stall, peer-end, docker-slow, toxiproxy-fail, http-fail, cpu-starve
	Target string    `json:"target"`
	Detail string    `json:"detail,omitempty"`
	// Until: when a fault that lasts (a starved CPU) ends.
	Until time.Time `json:"until,omitzero"`
}

package judge

import (
	"fmt"

	"github.com/harp-project/harp/harness/core/cliout"
	"github.com/harp-project/harp/harness/core/obs"
)

// Aftermath is what a stretch of a node's run (a round of runtime
// commands, a trigger) left of its worker, as a judge reads it: the
// watchdog's lines in the output since, the exit of the worker current
// before, the worker current after, and whether the master exited.
// The suite's aftermath reads it. Embedded in the facts, its fields read
// as the facts' own, in the evidence and in obs.Unknowns' paths.
type Aftermath struct {
	WorkerBefore int `json:"worker_before"`
	WorkerAfter  int `json:"worker_after"` // 0: show proc unread
	// Master at the end of the stretch: gone or not. A master that exited
	// (2.6 leaves with its worker when the watchdog kills it) is HAProxy's
	// answer, and explains every read that failed after it.
	Master obs.Optional[obs.Exit] `json:"master"`
	// Unread is the first reading at the end of the stretch harp could not
	// make (output, exits, current worker): the facts then say nothing,
	// unless the master is seen gone beside the violation.
	Unread obs.Optional[string] `json:"unread"`
	Stalls []cliout.Stall       `json:"stalls,omitempty"`
	Panics []cliout.Panic       `json:"panics,omitempty"`
	Died   string               `json:"died,omitempty"` // "worker 8 exited with code 134 (Aborted)"
	Fresh  string               `json:"-"`              // the output since, for the report
}

// NotRead records a failed reading (the first one is kept).
func (a *Aftermath) NotRead(format string, args ...any) {
	if a.Unread.State == "" {
		a.Unread = obs.Opt(obs.Failure[string](format, args...))
	}
}

// Watchdog says whether the watchdog spoke: a warning, a panic, or the
// worker's death.
func (a Aftermath) Watchdog() bool { return len(a.Panics) > 0 || len(a.Stalls) > 0 || a.Died != "" }

// Violations is what the stretch did to the worker, each said as a
// violation: the watchdog's kill, its warnings, the master's exit, and
// the worker's death or, when it did not die, its replacement.
func (a Aftermath) Violations() []string {
	var v []string
	if len(a.Panics) > 0 {
		v = append(v, fmt.Sprintf("the watchdog killed the worker (%s)", a.Panics[0].Line))
	}
	if len(a.Stalls) > 0 {
		v = append(v, fmt.Sprintf("%d watchdog warnings (longest %d ms)", len(a.Stalls), cliout.MaxStall(a.Stalls)))
	}
	if m, _ := a.Master.Get(); m.Process != "" {
		v = append(v, m.String())
	}
	if a.Died != "" {
		v = append(v, a.Died)
	} else if a.WorkerAfter != 0 && a.WorkerAfter != a.WorkerBefore { // 0: show proc unread
		v = append(v, fmt.Sprintf("the current worker changed from %d to %d", a.WorkerBefore, a.WorkerAfter))
	}
	return v
}

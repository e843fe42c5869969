// Package judge decides one conf-runtime-limits round from what it
// observed: pure functions of recorded facts, with nothing of Docker's in
// their imports, so that `make unit` tests them alone.
package judge

import (
	"fmt"
	"strings"
	"time"

	"github.com/harp-project/harp/harness/core/obs"
)

// ResumeBound is how soon traffic must be served again once the limit is
// raised before the round calls it late.
const ResumeBound = 5 * time.Second

// HangBound is how long a command is waited for before it counts as
// never answered: a hung worker never answers (HAProxy's watchdog kills it
// within seconds), a slow machine answers late.
func HangBound(bound time.Duration) time.Duration { return max(5*bound, 15*time.Second) }

// Never is a resume that never came within HangBound.
const Never = time.Duration(1<<63 - 1)

// Unserved is a cycle whose requests of harp's went unserved for waited
// after the limit was raised, from frontend web's count of 2xx responses
// read then (before) and after (after, through the same CLI). It is Never,
// HAProxy's hang, only while the CLI answered and the count stood still: a
// frontend that went on serving the load resumed, and harp's request
// waited behind the load's queue (a starved machine drains it slower than
// the load fills it), which is unknown.
func Unserved(waited time.Duration, before, after obs.Of[int64]) obs.Of[time.Duration] {
	b, bok := before.Get()
	a, aok := after.Get()
	switch {
	case !aok:
		return obs.Failure[time.Duration]("no request served for %s and the worker's CLI did not answer either (%s)", waited, after.Unknown())
	case !bok:
		return obs.Failure[time.Duration]("no request of harp's served for %s, and how many the frontend served could not be read when the limit was raised (%s)", waited, before.Unknown())
	case a > b:
		return obs.Failure[time.Duration]("no request of harp's served for %s, but the frontend served %d requests of the load meanwhile (hrsp_2xx): it resumed, and harp's request waited behind the load's queue", waited, a-b)
	}
	return obs.Value(Never)
}

// Facts are what one round observed.
type Facts struct {
	Kind      string        `json:"kind"`
	Cycles    int           `json:"cycles"`
	CLIBound  time.Duration `json:"cli_bound_ns"`
	Setup     string        `json:"setup,omitempty"`
	ProbeTook time.Duration `json:"probe_took_ns"` // one request through the slow server
	// The workers before and after, the watchdog's lines, the master's
	// exit, and the first reading at the end of the round harp could not
	// make (the round then says nothing, unless the master is seen gone
	// beside the violation).
	Aftermath
	CLI []Call `json:"cli"`
	// Resumed: per cycle, how long until a request was served after the
	// limit was raised (Never: not within HangBound while the CLI answered).
	Resumed  []obs.Of[time.Duration] `json:"resumed"`
	MetLimit bool                    `json:"met_limit"` // some request waited on, or was refused by, the limit
	Requests uint64                  `json:"requests"`
	// NotApplied: the limit never showed on the admin socket.
	NotApplied string `json:"not_applied,omitempty"`
}

// Round decides one round. A command the build refuses (its answer is
// not empty) makes the round say nothing about hangs: unmet. A stuck CLI,
// a watchdog line, a dead or replaced worker, or traffic that never comes
// back is the violation.
func Round(f Facts) (violation, unmet string) {
	if f.Setup != "" {
		return "", f.Kind + ": " + f.Setup
	}
	var v []string
	if s, answered := FirstLate(f.CLI, f.CLIBound, HangBound(f.CLIBound)); s != "" {
		if answered && !f.Watchdog() {
			return "", f.Kind + ": " + s + ": slow, not stuck (a loaded machine?)"
		}
		v = append(v, s)
	}
	v = append(v, f.Violations()...) // the watchdog's lines, the master's exit, a dead or replaced worker
	if len(v) == 0 && f.NotApplied != "" {
		return "", f.Kind + ": the limit did not take effect: " + f.NotApplied
	}
	if c, refused := Refused(f.CLI); len(v) == 0 && refused {
		return "", fmt.Sprintf("%s: this build answers %q with %q: the round cannot pause the listeners that way", f.Kind, c.Command, c.Answer)
	}
	lost, slow := 0, 0
	for _, r := range f.Resumed {
		switch d, ok := r.Get(); {
		case ok && d == Never:
			lost++
		case ok && d > ResumeBound:
			slow++
		}
	}
	if lost > 0 {
		v = append(v, fmt.Sprintf("traffic did not resume within %s after the limit was raised in %d of %d cycles, while the CLI answered", HangBound(f.CLIBound), lost, len(f.Resumed)))
	}
	switch {
	case len(v) == 0 && slow > 0:
		return "", fmt.Sprintf("%s: traffic resumed, but later than %s in %d of %d cycles: slow, not stuck (a loaded machine?)", f.Kind, ResumeBound, slow, len(f.Resumed))
	case len(v) == 0 && !f.MetLimit:
		return "", fmt.Sprintf("%s: no request of the load (%d sent) waited on or was refused by the limit: nothing queued, the round tested nothing", f.Kind, f.Requests)
	case len(v) == 0:
		return "", ""
	}
	return f.Kind + ": " + strings.Join(v, "; "), ""
}

// Package judge decides one conf-runtime-limits round from what it
// observed: pure functions of recorded facts, with nothing of Docker's in
// their imports, so that `make unit` tests them alone.
package judge

import (
	"fmt"
	"strings"
	"time"

	"github.com/harp-project/harp/harness/cliout"
	"github.com/harp-project/harp/harness/obs"
)

// ResumeBound is how soon traffic must be served again once the limit is
// raised before the round calls it late.
const ResumeBound = 5 * time.Second

// NotSent begins the error of a command that never reached the socket
// (even when sent again): HAProxy never saw it, so it says nothing.
const NotSent = "never reached the socket: "

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

// CLICall is one runtime command and how it went.
type CLICall struct {
	Command string        `json:"command"`
	Took    time.Duration `json:"took_ns"`
	Answer  string        `json:"answer,omitempty"`
	Err     string        `json:"error,omitempty"`
	// Control, for a command not answered within the bound: whether the
	// master's CLI answered meanwhile (unknown when harp reached neither).
	Control obs.Optional[bool] `json:"control"`
}

// Facts are what one round observed.
type Facts struct {
	Kind         string        `json:"kind"`
	Cycles       int           `json:"cycles"`
	CLIBound     time.Duration `json:"cli_bound_ns"`
	Setup        string        `json:"setup,omitempty"`
	ProbeTook    time.Duration `json:"probe_took_ns"` // one request through the slow server
	WorkerBefore int           `json:"worker_before"`
	WorkerAfter  int           `json:"worker_after"`
	CLI          []CLICall     `json:"cli"`
	// Resumed: per cycle, how long until a request was served after the
	// limit was raised (Never: not within HangBound while the CLI answered).
	Resumed  []obs.Of[time.Duration] `json:"resumed"`
	MetLimit bool                    `json:"met_limit"` // some request waited on, or was refused by, the limit
	// Master at the end of the round: gone or not.
	Master obs.Optional[obs.Exit] `json:"master"`
	// Unread is the first reading at the end of the round harp could not
	// make (output, exits, current worker): the round then says nothing,
	// unless the master is seen gone beside the violation.
	Unread   obs.Optional[string] `json:"unread"`
	Requests uint64               `json:"requests"`
	Stalls   []cliout.Stall       `json:"stalls,omitempty"`
	Panics   []cliout.Panic       `json:"panics,omitempty"`
	Died     string               `json:"died,omitempty"`
	// NotApplied: the limit never showed on the admin socket.
	NotApplied string `json:"not_applied,omitempty"`
}

// MarkUnread records a failed reading (the first one is kept).
func (f *Facts) MarkUnread(format string, args ...any) {
	if f.Unread.State == "" {
		f.Unread = obs.Opt(obs.Failure[string](format, args...))
	}
}

// Stuck is the first command not answered within the bound, said as it
// went ("" when every command answered in time).
func (f Facts) Stuck() string {
	s, _ := f.late()
	return s
}

// late is the first command not answered within the bound: how it went,
// and whether it was answered at all (late is slow, not stuck).
func (f Facts) late() (what string, answered bool) {
	for _, c := range f.CLI {
		switch {
		case c.Err == "" && c.Took <= f.CLIBound:
			continue
		case c.Err == "":
			return fmt.Sprintf("%q answered after %s, beyond %s", c.Command, c.Took.Round(time.Millisecond), f.CLIBound), true
		case strings.Contains(c.Err, "closed without an answer"):
			// A worker the watchdog kills closes the connection without
			// a byte: no answer either, said as it was.
			return fmt.Sprintf("%q was not answered: the connection closed %s after it was sent", c.Command, c.Took.Round(10*time.Millisecond)), false
		}
		return fmt.Sprintf("%q did not answer within %s (%s)", c.Command, HangBound(f.CLIBound), c.Err), false
	}
	return "", false
}

// Slowest is the command that took longest to answer.
func (f Facts) Slowest() CLICall {
	var s CLICall
	for _, c := range f.CLI {
		if c.Took > s.Took {
			s = c
		}
	}
	return s
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
	watchdog := len(f.Panics) > 0 || len(f.Stalls) > 0 || f.Died != ""
	if s, answered := f.late(); s != "" {
		if answered && !watchdog {
			return "", f.Kind + ": " + s + ": slow, not stuck (a loaded machine?)"
		}
		v = append(v, s)
	}
	if len(f.Panics) > 0 {
		v = append(v, fmt.Sprintf("the watchdog killed the worker (%s)", f.Panics[0].Line))
	}
	if len(f.Stalls) > 0 {
		v = append(v, fmt.Sprintf("%d watchdog warnings (longest %d ms)", len(f.Stalls), cliout.MaxStall(f.Stalls)))
	}
	if m, _ := f.Master.Get(); m.Process != "" {
		v = append(v, m.String())
	}
	if f.Died != "" {
		v = append(v, f.Died)
	} else if f.WorkerAfter != 0 && f.WorkerAfter != f.WorkerBefore { // 0: show proc unread
		v = append(v, fmt.Sprintf("the current worker changed from %d to %d", f.WorkerBefore, f.WorkerAfter))
	}
	if len(v) == 0 && f.NotApplied != "" {
		return "", f.Kind + ": the limit did not take effect: " + f.NotApplied
	}
	if len(v) == 0 {
		for _, c := range f.CLI {
			if c.Answer != "" && !strings.HasPrefix(c.Answer, "Done") {
				return "", fmt.Sprintf("%s: this build answers %q with %q: the round cannot pause the listeners that way", f.Kind, c.Command, c.Answer)
			}
		}
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

// Package judge decides a listener-livelock attack from what it
// observed: pure functions of recorded facts, with nothing of Docker's in
// their imports, so that `make unit` tests them alone.
package judge

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	"github.com/harp-project/harp/harness/core/cliout"
	"github.com/harp-project/harp/harness/live/load"
)

// Params are the knobs, read from the run's parameters.
type Params struct {
	Threads, Groups           int
	Layout, Variant, CPUSet   string
	Rate                      int
	Duration                  time.Duration
	FrontendMaxconn, ProcessM int
	Service, Timeout          time.Duration
	// ControlMaxconn is the limit during the control: one the same load
	// never reaches (the process's configured maxconn, lowered at run time
	// to ProcessM for the attack in VARIANT=process).
	ControlMaxconn int
	// HAProxyCPUs run the node; LoadCPUs the rest of the machine: vegeta
	// (this process, pinned during the attacks) and the slow backend.
	HAProxyCPUs, LoadCPUs []int
}

// LayoutUnmet says why the layout cannot show the livelock: it needs
// listeners in several thread groups.
func (p Params) LayoutUnmet() string {
	if p.Layout != "groups" || p.Groups < 2 {
		return fmt.Sprintf("the livelock needs listeners in several thread groups (LAYOUT=groups, GROUPS of 2 or more); LAYOUT=%s with %d group(s) cannot show it", p.Layout, p.Groups)
	}
	return ""
}

// Facts are what one attack observed; Attack decides from them alone.
type Facts struct {
	Params Params
	WorkerLayout
	Control Round // the same load with limits it never reaches
	Attack  Round // the load against the real limit
	// Undrained: the control's connections never left, so no attack ran.
	Undrained string `json:",omitempty"`
}

// Round is one run of the load: its peaks, the stalls and ends logged
// during it and the load's result; Ran is false when it never started.
type Round struct {
	Ran   bool
	Peaks ConnPeaks
	cliout.Watchdog
	Load load.Result
}

func (r Round) String() string {
	counted, on := ListenerStalls(r.Stalls, 100)
	return fmt.Sprintf("%s; frontend sessions peaked at %d of %d, process connections at %d of %d; %d stall warnings (%d over 100 ms counted, %d on the listener path, longest %d ms); %d panics, %d worker exits",
		r.Load, r.Peaks.Frontend, r.Peaks.FrontendLimit, r.Peaks.Process, r.Peaks.ProcessLimit, len(r.Stalls), len(counted), on, cliout.MaxStall(r.Stalls), len(r.Panics), len(r.WorkerExits))
}

// WorkerUnmet says how the running worker differs from what the config asks.
func WorkerUnmet(f Facts) string {
	p := f.Params
	want := p.Threads // listeners: one per thread (shards by-thread, or binds)
	if p.Layout == "groups" {
		want = p.Groups
	}
	return f.WorkerLayout.Differs(WorkerLayout{Threads: int64(p.Threads), Groups: p.Groups, Listeners: want}, p.Layout)
}

// Attack decides an attack from its facts. Every precondition comes first:
// the layout, the control (the same load that never reaches a limit must
// not stall: else stalls are the machine's), the limit reached; only then
// do stalls on the listener path, panics and exits count.
func Attack(f Facts) (violation, unmet, remark string) {
	if u := cmp.Or(WorkerUnmet(f), f.Params.LayoutUnmet()); u != "" {
		return "", u, ""
	}
	if f.Undrained != "" {
		return "", f.Undrained + ": the attack would not start from an idle process", ""
	}
	if !f.Control.Ran || !f.Attack.Ran {
		return "", "the attack never ran", ""
	}
	if crash := f.Control.Crashed(); crash != "" {
		return "", fmt.Sprintf("the control (same load, limit never reached) crashed too (%s): the crash is not the livelock's", crash), ""
	}
	if c, _ := ListenerStalls(f.Control.Stalls, 100); len(c) > 0 {
		return "", fmt.Sprintf("the control (same load, limit never reached) stalled too: %d stalls over 100 ms (longest %d ms), so stalls here are not the livelock's", len(c), cliout.MaxStall(c)), ""
	}
	process := f.Params.Variant == "process" // whose limit the variant reaches
	if hit, _ := f.Control.Peaks.Reached(process); hit {
		return "", "the control reached its limit: it is no control", ""
	}
	// A panic or an exit under the attack is the livelock's end whatever
	// the peaks showed (a livelocked worker stops answering the sampling).
	crash := f.Attack.Crashed()
	if hit, what := f.Attack.Peaks.Reached(process); !hit && crash == "" {
		return "", what, ""
	}
	var bad []string
	if c, _ := ListenerStalls(f.Attack.Stalls, 100); len(c) > 0 {
		bad = append(bad, fmt.Sprintf("%d stalls over 100 ms (longest %d ms)", len(c), cliout.MaxStall(c)))
	}
	if crash != "" {
		bad = append(bad, crash)
	}
	switch {
	case len(bad) > 0:
		return strings.Join(bad, ", "), "", ""
	case !cliout.WarnsOnStalls(f.Version):
		// Without the watchdog's warnings only panics and exits are seen:
		// a stall shorter than a panic would go unnoticed.
		return "", fmt.Sprintf("limit reached and no panic or exit, but HAProxy %s emits no stall warnings (3.1 and later do): stalls cannot be seen", f.Version), ""
	}
	return "", "", "limit reached, 0 stalls over 100 ms on the listener path"
}

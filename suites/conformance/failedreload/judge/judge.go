// Package judge decides a conf-failed-reload cycle from what it observed:
// pure functions of recorded facts, with nothing of Docker's in their
// imports, so that `make unit` tests them alone.
package judge

import (
	"fmt"
	"time"

	"github.com/harp-project/harp/harness/core/cliout"
	"github.com/harp-project/harp/harness/core/obs"
	"github.com/harp-project/harp/harness/core/text"
	"github.com/harp-project/harp/harness/core/verdict"
)

// SuiteID is the suite's id, the first part of its findings' signatures.
const SuiteID = "conf-failed-reload"

// Facts are what one failure/recovery cycle observed. Every reading is an
// obs.Of: a reading harp could not make is unknown and decides nothing
// (verdict.Decide), unless the master or the old worker was seen gone,
// which explains it.
type Facts struct {
	Break        string           `json:"break"`
	BreakID      string           `json:"break_id,omitempty"`
	Recovery     string           `json:"recovery"`
	Bound        time.Duration    `json:"bound_ns"`
	Setup        string           `json:"setup,omitempty"`
	FailedBefore int              `json:"failed_before"`
	Master       obs.Of[obs.Exit] `json:"master"` // after the failed reload
	OldPID       int              `json:"old_pid"`
	// Procs is show proc at the moment it counted the failure, or once its
	// count was final (the master logged the failure before it was read),
	// or at the end of Bound.
	Procs         obs.Of[ProcsAfter]     `json:"show_proc_after"`
	OldWorker     obs.Optional[obs.Exit] `json:"old_worker_gone"`
	HTTP          obs.Of[int]            `json:"http_after"` // 0: no answer while its CLI answered
	EntryWant     string                 `json:"entry_want"`
	Entry         obs.Of[string]         `json:"entry_after"` // gpc0, or "absent"
	Signals       obs.Of[Signals]        `json:"master_signals"`
	HarnessErr    string                 `json:"harness_error,omitempty"` // harp could not ask for the recovery
	Recovered     bool                   `json:"recovered"`
	RecoveryErr   string                 `json:"recovery_error,omitempty"`
	HTTPRecovered obs.Optional[int]      `json:"http_recovered"`
}

// Signals is the master's SIGUSR2 state (/proc/<master>/status).
type Signals = cliout.ReloadSignal

// Check ids: a finding is the suite and the check that failed.
const (
	CheckMasterSurvives  = "master-survives"       // the master is still running after the failed reload
	CheckCounted         = "failed-reload-counted" // show proc counts one more failed reload
	CheckOldWorkerKept   = "old-worker-kept"
	CheckNoNewWorker     = "no-new-worker"
	CheckOldWorkerServes = "old-worker-serves"
	CheckTableKept       = "table-kept"
	CheckTakesSignals    = "master-takes-signals" // SIGUSR2 neither blocked nor left pending
	CheckNextReload      = "next-reload-works"
	CheckNewWorkerServes = "new-worker-serves"
)

// CycleChecks decides one cycle from what HAProxy showed, with the checks
// it evaluated, each by its id: one whose facts were not observed is not
// listed. Whatever the failed reload changed is a violation; so is a next
// reload the master does not take. Unknown readings are left to the one
// rule on observations.
func CycleChecks(f Facts) (cs verdict.Checks, violation, unmet string) {
	if f.Setup != "" {
		return nil, "", f.Break + ": " + f.Setup
	}
	defer func() { cs = cs.Qualified(f.BreakID) }()
	if m, ok := f.Master.Get(); ok && m.Process != "" {
		cs.Fail(CheckMasterSurvives, fmt.Sprintf("the %s after the failed reload", m))
	} else {
		if ok {
			cs.Hold(CheckMasterSurvives)
		}
		nothingChanged(&cs, f)
		nextReloadWorks(&cs, f)
	}
	if violation = cs.Violation(fmt.Sprintf("%s, recovery by %s", f.Break, f.Recovery)); violation == "" && f.HarnessErr != "" {
		return cs, "", f.Break + ": " + f.HarnessErr
	}
	return cs, violation, ""
}

// nothingChanged: after the failed reload show proc counts it and lists
// the worker from before and no new one, that worker serves and holds
// its entry, and the master takes SIGUSR2.
func nothingChanged(cs *verdict.Checks, f Facts) {
	if p, ok := f.Procs.Get(); ok {
		uncounted := fmt.Sprintf("show proc never counted the failed reload within %s (failed: %d -> %d)", f.Bound, f.FailedBefore, p.Failed)
		if p.Final {
			uncounted = fmt.Sprintf("show proc did not count the failed reload (failed: %d -> %d, read after the master logged the failure)", f.FailedBefore, p.Failed)
		}
		cs.Expect(CheckCounted, p.Counted, uncounted)
		cs.Expect(CheckOldWorkerKept, p.OldListed, fmt.Sprintf("the old worker %d is gone after the failed reload", f.OldPID))
		cs.Expect(CheckNoNewWorker, p.NewWorker == 0, fmt.Sprintf("a new worker %d started although the config could not load", p.NewWorker))
	}
	if code, ok := f.HTTP.Get(); ok {
		cs.Expect(CheckOldWorkerServes, code == 200, fmt.Sprintf("the old worker answered HTTP %s after the failed reload", text.HTTPCode(code)))
	}
	if e, ok := f.Entry.Get(); ok {
		cs.Expect(CheckTableKept, e == f.EntryWant, fmt.Sprintf("the old worker's table entry is %s after the failed reload, want gpc0=%s", e, f.EntryWant))
	}
	if s, ok := f.Signals.Get(); ok {
		cs.Expect(CheckTakesSignals, s.Text() == "", s.Text()+" after the failed reload")
	}
}

// nextReloadWorks: with the good config back, the next reload starts a
// worker that serves (a reload harp could not observe decides nothing).
func nextReloadWorks(cs *verdict.Checks, f Facts) {
	switch {
	case !f.Recovered && f.HarnessErr == "":
		cs.Fail(CheckNextReload, fmt.Sprintf("the next reload (%s, good config) did not take: %s", f.Recovery, f.RecoveryErr))
	case f.Recovered:
		cs.Hold(CheckNextReload)
		if code, ok := f.HTTPRecovered.Get(); ok {
			cs.Expect(CheckNewWorkerServes, code == 200, fmt.Sprintf("after the next reload the new worker answered HTTP %s", text.HTTPCode(code)))
		}
	}
}

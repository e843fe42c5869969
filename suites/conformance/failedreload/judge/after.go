package judge

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/harp-project/harp/harness/core/cliout"
	"github.com/harp-project/harp/harness/core/obs"
)

// ProcsAfter is what show proc said after a reload that should have
// failed, and when and why harp stopped watching it.
type ProcsAfter struct {
	Failed    int  `json:"failed"`
	Counted   bool `json:"counted"` // one more failed reload than before
	OldListed bool `json:"old_listed"`
	NewWorker int  `json:"new_worker,omitempty"` // a current worker other than old
	// At is when this show proc was read, after SIGUSR2.
	At time.Duration `json:"at_ns,omitempty"`
	// Final: this reading began after the master had logged the reload's
	// failure (FailureLogged), so its count can no longer change.
	Final bool `json:"final,omitempty"`
}

// ReadAfter reads show proc after a reload that should have failed,
// given the master's failed count before it and the worker (old) that
// served before it.
func ReadAfter(p cliout.Procs, failedBefore, old int) ProcsAfter {
	a := ProcsAfter{Failed: p.Master.Failed, Counted: p.Master.Failed > failedBefore}
	_, a.OldListed = p.Find(old)
	if cur, ok := p.Current(); ok && cur.PID != old {
		a.NewWorker = cur.PID
	}
	return a
}

// failureLines are the master's words for a reload that failed, each
// printed once the failed count is what show proc will say until the next
// reload; every master serves its CLI only from its loop, after them:
//   - "Loading failure!": up to 3.0, reexec_on_failure() counts, prints it
//     and re-executes the master, whose CLI then reads the count back;
//   - "Failed to load worker": from 3.1, mworker_on_new_child_failure()
//     counts a new worker that died while loading, then prints it;
//   - "Master failed to parse new configuration": from 3.1, the master's
//     own parse failed; run_master_in_recovery_mode() then counts (and the
//     loop entry resets, the bug of mworker-failed-reload-not-counted)
//     before the master's loop answers anything.
var failureLines = regexp.MustCompile(`(?m)^.*(Loading failure!|Failed to load worker|Master failed to parse new configuration).*$`)

// FailureLogged is the master's line in fresh, what it printed since
// SIGUSR2, saying the reload failed ("", false when there is none yet).
// A show proc that begins after it reads the count the master keeps: a
// wait for one more failed reload can end there, whatever the count.
func FailureLogged(fresh string) (string, bool) {
	line := failureLines.FindString(fresh)
	return strings.TrimSpace(line), line != ""
}

// After is what a reload with a config that cannot load left, typed for
// the judge: a show proc harp could not read is unknown, never "not
// counted" or "old worker gone".
type After struct {
	// FailedBefore is show proc's count of failed reloads just before it.
	FailedBefore int
	Old          int              // the worker that served before it
	Master       obs.Of[obs.Exit] // the master gone, or running
	// Procs is show proc at the moment it counted one more failed reload,
	// or its count was final, or at the end of the wait.
	Procs obs.Of[ProcsAfter]
	// OldGone is the worker from before seen gone: show proc no longer
	// lists it.
	OldGone obs.Optional[obs.Exit]
	// Demoted: show proc lists no current worker, and the one from before,
	// which keeps serving, among the old workers (as 3.1 and later do
	// after a failed reload).
	Demoted bool
	// Logged is the master's line that made the count final ("" when the
	// count moved first, or the wait ran to its bound).
	Logged string
}

// AfterReading reads show proc (procs, read At after SIGUSR2, Final when
// it began after the master logged the failure) after a failed reload,
// given the master's failed count before and the worker from before.
func AfterReading(procs obs.Of[cliout.Procs], at time.Duration, final bool, master obs.Of[obs.Exit], failedBefore, old int) After {
	r := After{FailedBefore: failedBefore, Old: old, Master: master, Procs: obs.Failure[ProcsAfter]("%s", procs.Unknown())}
	p, ok := procs.Get()
	if !ok {
		return r
	}
	a := ReadAfter(p, failedBefore, old)
	a.At, a.Final = at, final
	_, current := p.Current()
	r.Procs, r.Demoted = obs.Value(a), !current && a.OldListed
	if !a.OldListed {
		r.OldGone = obs.Opt(obs.Value(obs.Exit{Process: fmt.Sprintf("old worker %d", old)}))
	}
	return r
}

// Notes are what the failed reload showed besides its facts, for a
// trial's notes: when the count was decided, and the worker that keeps
// serving listed among the old ones.
func (r After) Notes() []string {
	var out []string
	if a, ok := r.Procs.Get(); ok {
		switch {
		case a.Counted:
			out = append(out, fmt.Sprintf("show proc counted the failed reload %s after SIGUSR2", a.At.Round(time.Millisecond)))
		case a.Final:
			out = append(out, fmt.Sprintf("show proc's count final %s after SIGUSR2: read after the master logged %q", a.At.Round(time.Millisecond), r.Logged))
		}
	}
	if r.Demoted {
		out = append(out, fmt.Sprintf("show proc lists the worker that keeps serving, %d, among the old workers (as 3.1 and later do after a failed reload)", r.Old))
	}
	return out
}

// Package verdict holds what a suite run concludes: the verdict, the trial
// counts behind it, and the reason, in the form reports and exit codes use.
package verdict

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/harp-project/harp/harness/core/obs"
	"github.com/harp-project/harp/harness/core/record"
)

// Verdict is the answer for one suite on one build.
type Verdict string

const (
	Pass         Verdict = "PASS"         // expected behaviour held
	Reproduced   Verdict = "REPRODUCED"   // expected behaviour violated
	Inconclusive Verdict = "INCONCLUSIVE" // a precondition was not met
	Error        Verdict = "ERROR"        // harness or infrastructure failure
)

// ExitCode is the process exit status for a verdict.
func (v Verdict) ExitCode() int {
	switch v {
	case Pass:
		return 0
	case Reproduced:
		return 1
	case Inconclusive:
		return 2
	}
	return 3
}

// GitBisectCode is the exit status `git bisect run` reads: PASS is good
// (0), REPRODUCED bad (1), and a step that could not decide is skipped
// (125), never called good or bad.
func (v Verdict) GitBisectCode() int {
	switch v {
	case Pass:
		return 0
	case Reproduced:
		return 1
	}
	return 125
}

// severity orders verdicts for a gate over several cells: a harness error
// first, then a reproduced bug (an inconclusive cell must not hide it),
// then an inconclusive one.
func (v Verdict) severity() int {
	switch v {
	case Pass:
		return 0
	case Inconclusive:
		return 1
	case Reproduced:
		return 2
	}
	return 3
}

// Worst is the verdict of several cells: ERROR if any errored, else
// REPRODUCED if any reproduced, else INCONCLUSIVE if any was, else PASS
// (PASS for none).
func Worst(vs ...Verdict) Verdict {
	w := Pass
	for _, v := range vs {
		if v.severity() > w.severity() {
			w = v
		}
	}
	return w
}

// Trial is one trial (a reload round, a connection attempt, ...).
type Trial struct {
	N int `json:"n"`
	// Violation says how the expectation was violated ("" if it held).
	Violation string `json:"violation,omitempty"`
	// Unmet names the precondition that was not met ("" if all were).
	Unmet string `json:"unmet,omitempty"`
	// NotApplicable says why the trial's case does not apply to the build
	// (a suite made of cases: one too old for it, or without a capability
	// it needs): the trial neither held nor failed, and counts in no
	// verdict; a run where no trial applied is INCONCLUSIVE.
	NotApplicable string `json:"not_applicable,omitempty"`
	// Remark is something else worth saying that does not change the
	// verdict (e.g. the old worker crashed after it had taught its tables).
	Remark string `json:"remark,omitempty"`
	// Lasting says the unmet precondition is the build's own behaviour
	// (a resync that never finishes), which no later trial can change: the
	// run stops there, and a bisect does not retry the step.
	Lasting bool `json:"unmet_lasting,omitempty"`
	// Weak is what the trial still saw of the bug although a precondition
	// was unmet; each suite documents which observations it trusts so. It
	// never changes the verdict (an INCONCLUSIVE stays one), but a bisect
	// may use it to narrow its range.
	Weak string `json:"weak_observation,omitempty"`
	// Checks are the named expectations the judge evaluated, held or
	// failed (a suite that names its checks); a finding is a failed one.
	Checks Checks `json:"checks,omitempty"`
	// Unknown lists the observations in Evidence that harp failed to make
	// (obs.Unknowns); Decide fills it. A trial with any is inconclusive
	// whatever its judge said: a harness fault never becomes a verdict.
	Unknown []string `json:"unknown,omitempty"`
	// HarnessFaults are the faults the nemesis injected into harp's own
	// side while the trial ran (harp --harness-faults).
	HarnessFaults []record.HarnessFault `json:"harness_faults,omitempty"`
	Duration      time.Duration         `json:"duration_ns"`
	Notes         []string              `json:"notes,omitempty"`    // what was observed, for the report
	Blocks        []Block               `json:"blocks,omitempty"`   // runtime output the report shows whole
	Evidence      any                   `json:"evidence,omitempty"` // what the suite observed, typed per suite
	Exchanges     []record.Exchange     `json:"transcript,omitempty"`
}

// Block is a piece of runtime output a report shows as it was.
type Block struct {
	Title string `json:"title"`
	Text  string `json:"text"`
}

// Outcome is what a suite's run function returns.
type Outcome struct {
	Trials []Trial
	// Unmet is a precondition of the whole run that was not met.
	Unmet string
	// ControlFailed says the control scenario failed: then no violation
	// counts, the verdict is INCONCLUSIVE with both counts.
	ControlFailed string
	// Err is a harness or infrastructure failure.
	Err error
}

// Decide turns an outcome into a verdict, counts and a reason. noun names
// the trials ("reloads", "trials").
func Decide(o Outcome, noun string) (v Verdict, violated int, reason string) {
	MarkUnknown(o.Trials)
	v, violated, reason = decide(o, noun)
	remarks := map[string]int{}
	for _, t := range o.Trials {
		if t.Remark != "" {
			remarks[t.Remark]++
		}
	}
	var parts []string
	for what, k := range remarks {
		parts = append(parts, fmt.Sprintf("%s in %d of %d %s", what, k, len(o.Trials), noun))
	}
	sort.Strings(parts)
	if len(parts) > 0 {
		reason += "; also: " + strings.Join(parts, "; ")
	}
	return v, violated, reason
}

// MarkUnknown applies the one rule on observations to every trial: one
// whose evidence holds an unknown observation (obs.Judged) gets it in
// Unknown, and so cannot be a violation or a pass; only a process under
// test seen gone, beside the violation it makes, explains them.
func MarkUnknown(ts []Trial) {
	for i := range ts {
		if ts[i].NotApplicable != "" {
			continue // it observed nothing, and needed nothing
		}
		u, exited := obs.Judged(ts[i].Evidence)
		if exited && ts[i].Violation != "" {
			continue // the process seen gone is the violation, and explains what could not be read after it
		}
		if len(u) > 0 {
			ts[i].Unknown = u
		}
	}
}

// Notef adds an observation to the report.
func (t *Trial) Notef(format string, args ...any) {
	t.Notes = append(t.Notes, fmt.Sprintf(format, args...))
}

// Show adds runtime output the report shows whole.
func (t *Trial) Show(title, text string) {
	t.Blocks = append(t.Blocks, Block{Title: title, Text: text})
}

// UnmetReason is why a trial is inconclusive ("" when it is not): its own unmet
// precondition, or an observation harp failed to make.
func (t Trial) UnmetReason() string {
	if t.Unmet != "" {
		return t.Unmet
	}
	return obs.Reason(t.Unknown)
}

func decide(o Outcome, noun string) (v Verdict, violated int, reason string) {
	byWhat := map[string]int{}
	var unmet, na []string
	for _, t := range o.Trials {
		switch {
		case t.NotApplicable != "" && t.Violation == "":
			na = append(na, t.NotApplicable)
		case t.UnmetReason() != "":
			// A violation seen without its preconditions proves nothing:
			// the trial is inconclusive, and its reason keeps both texts.
			u := fmt.Sprintf("%s %d: %s", singular(noun), t.N, t.UnmetReason())
			if t.Violation != "" {
				u += " (a violation was also recorded: " + t.Violation + ")"
			}
			unmet = append(unmet, u)
		case t.Violation != "":
			violated++
			byWhat[t.Violation]++
		}
	}
	// Only trials that apply count: a case not applicable to the build is
	// never held (it ran nothing), and says so apart.
	n := len(o.Trials) - len(na)
	notApplicable := ""
	if len(na) > 0 {
		notApplicable = fmt.Sprintf("; %d of %d %s not applicable to this build (held by none)", len(na), len(o.Trials), noun)
	}
	switch {
	case o.Err != nil:
		return Error, violated, o.Err.Error()
	case o.Unmet != "" && violated > 0:
		return Inconclusive, violated, fmt.Sprintf("%s; expectation violated in %d of %d %s", o.Unmet, violated, n, noun)
	case o.Unmet != "":
		return Inconclusive, 0, o.Unmet
	case o.ControlFailed != "":
		return Inconclusive, violated, fmt.Sprintf("%s; expectation violated in %d of %d %s", o.ControlFailed, violated, n, noun)
	case violated > 0:
		var parts []string
		for what, k := range byWhat {
			parts = append(parts, fmt.Sprintf("%s in %d of %d %s", what, k, n, noun))
		}
		sort.Strings(parts)
		reason = strings.Join(parts, "; ")
		if len(unmet) > 0 {
			reason += fmt.Sprintf("; %d %s inconclusive", len(unmet), noun)
		}
		return Reproduced, violated, reason + notApplicable
	case len(unmet) > 0:
		return Inconclusive, 0, strings.Join(unmet, "; ") + notApplicable
	case len(o.Trials) == 0:
		return Inconclusive, 0, "no trial ran"
	case n == 0:
		return Inconclusive, 0, fmt.Sprintf("none of the %d %s applies to this build (e.g. %s): nothing was observed", len(o.Trials), noun, na[0])
	}
	if len(na) > 0 {
		return Pass, 0, fmt.Sprintf("expected behaviour held in %d of %d %s observed%s", n, n, noun, notApplicable)
	}
	return Pass, 0, fmt.Sprintf("expected behaviour held in %d of %d %s", n, n, noun)
}

func singular(noun string) string { return Singular(noun) }

// Singular is a trial noun's singular: reloads -> reload, histories ->
// history.
func Singular(noun string) string {
	if s, ok := strings.CutSuffix(noun, "ies"); ok && s != "" {
		return s + "y"
	}
	return strings.TrimSuffix(noun, "s")
}

// Lasting says whether o is inconclusive for a reason no rerun on the same
// build can change: an unmet trial marked lasting, and no violation.
func Lasting(o Outcome, noun string) bool {
	if v, _, _ := decide(o, noun); v != Inconclusive || o.ControlFailed != "" {
		return false
	}
	for _, t := range o.Trials {
		if t.Unmet != "" && t.Lasting {
			return true
		}
	}
	return false
}

// WeakObservation is, for an inconclusive outcome, what its unmet trials
// still saw of the bug ("" when nothing, or when the verdict is not
// INCONCLUSIVE: a weak observation never stands beside a real verdict).
func WeakObservation(o Outcome, noun string) string {
	if v, _, _ := decide(o, noun); v != Inconclusive || o.ControlFailed != "" || o.Unmet != "" {
		return "" // a failed control or a run-wide unmet precondition discredits every trial
	}
	var seen []string
	for _, t := range o.Trials {
		if t.UnmetReason() != "" && t.Weak != "" {
			seen = append(seen, fmt.Sprintf("%s %d: %s", singular(noun), t.N, t.Weak))
		}
	}
	return strings.Join(seen, "; ")
}

// Crash is what a maintainer asks for when a worker died on a signal:
// the signal, the last lines it and its master wrote, and a backtrace of
// every thread from its core dump (or why there is none).
type Crash struct {
	Node      string `json:"node"`
	PID       int    `json:"pid"`
	Code      int    `json:"exit_code"`
	Signal    string `json:"signal"`
	LastLog   string `json:"last_log"`
	Backtrace string `json:"backtrace,omitempty"`
	Note      string `json:"note,omitempty"` // why no backtrace, or what limits it
	// ASan is the AddressSanitizer report the worker wrote before it
	// aborted (an ASan build), its stacks included.
	ASan string `json:"asan,omitempty"`
	// ASanSummary is that report's SUMMARY line (kind and place).
	ASanSummary string `json:"asan_summary,omitempty"`
	// Suite is the suite whose run met the crash; Process is "master",
	// "worker" or "old worker"; Signature names the crash by its top
	// frames (Signature), the same in every cell and run.
	Suite     string `json:"suite,omitempty"`
	Process   string `json:"process,omitempty"`
	Signature string `json:"signature,omitempty"`
}

// WithMemoryErrors adds the AddressSanitizer findings of a run's crashes
// to its verdict's reason: a memory error is evidence whatever the suite
// judged, and the one line must say so.
func WithMemoryErrors(reason string, cs []Crash) string {
	var found []string
	for _, c := range cs {
		if c.ASan == "" {
			continue
		}
		what := c.ASanSummary
		if what == "" {
			what = "a report"
		}
		found = append(found, fmt.Sprintf("worker %d of %s: %s", c.PID, c.Node, what))
	}
	if len(found) == 0 {
		return reason
	}
	return reason + "; AddressSanitizer: " + strings.Join(found, "; ")
}

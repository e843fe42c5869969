package issue3519

import (
	"testing"

	"github.com/harp-project/harp/harness/core/obs"
	"github.com/harp-project/harp/harness/core/verdict"
	"github.com/harp-project/harp/suites/issue3519/judge"
)

// A control whose window could not be read makes its trial inconclusive:
// a control that says nothing never vouches for a trial.
func TestUnknownControl(t *testing.T) {
	control := verdict.Trial{N: 1, Evidence: &Evidence{Facts: judge.Facts{After: obs.Opt(obs.Failure[judge.State]("show peers: EOF"))}}}
	tr := verdict.Trial{N: 1, Violation: "replacement killed by HAProxy's reconnect check (no_hbt +1)", Evidence: &Evidence{Control: control,
		Facts: judge.Facts{Replace: true, Closing: obs.Opt(obs.Value("EOF")), After: obs.Opt(obs.Value(judge.State{NoHbt: 1}))}}}
	if got, _, reason := verdict.Decide(verdict.Outcome{Trials: []verdict.Trial{tr}}, "trials"); got != verdict.Inconclusive {
		t.Errorf("%s (%s)", got, reason)
	}
}

// Attempts that are not the scenario under test are run again; others are not.
func TestRerun(t *testing.T) {
	late, _ := judge.Trial(judge.Facts{Replace: true, CheckAfterHeartbeat: true})
	_, lateUnmet := judge.Trial(judge.Facts{Replace: true, CheckAfterHeartbeat: true})
	if late != "" || !rerun(lateUnmet) || !rerun(collided+": coll went from 0 to 2, want 1") || rerun("show peers never showed the first session established") {
		t.Errorf("rerun: %q", lateUnmet)
	}
}

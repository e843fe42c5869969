// Package judge decides one conf-updates-both-ways update from what it
// observed: pure functions of recorded facts, with nothing of Docker's in
// their imports, so that `make unit` tests them alone.
package judge

import (
	"fmt"
	"time"

	"github.com/harp-project/harp/harness/core/obs"
	"github.com/harp-project/harp/harness/core/verdict"
)

// The checks an update decides, each qualified by its kind's ID
// ("pushed-back.reload"): one direction can break without the other.
const (
	CheckReachesB   = "reaches-b"   // A's write is learnt by B
	CheckPushedBack = "pushed-back" // B's update of the entry it learnt reaches A
)

// Facts are what one update observed.
type Facts struct {
	Kind       string        `json:"kind"`
	KindID     string        `json:"kind_id,omitempty"` // the checks' qualifier
	Before     string        `json:"before,omitempty"`  // reload, restart
	Bound      time.Duration `json:"bound_ns"`
	MeshBefore string        `json:"mesh_before,omitempty"`
	WriteErr   string        `json:"write_error,omitempty"`
	// B's gpc0 ("" absent) after A's write, its reload or restart (Kept), its update (OnB); A's after it (OnA).
	Learned   obs.Optional[string] `json:"learned"`
	LearnedIn time.Duration        `json:"learned_in_ns"`
	BeforeErr string               `json:"before_error,omitempty"` // the reload or restart failed, or the mesh never came back
	Kept      obs.Optional[string] `json:"kept"`
	OnA       obs.Optional[string] `json:"on_a"`
	Latency   time.Duration        `json:"latency_ns"`
	OnB       obs.Optional[string] `json:"on_b"`
}

// Update decides one update, with the checks it evaluated (one whose
// facts were not reached is not listed). A's write not reaching B is a
// violation of the same property the other way; B losing the key on its
// own reload or restart is another property's (conf-reload-keeps-entries),
// so the update after it is not judged. Facts with an unknown reading
// decide nothing: they are left to the one rule on observations.
func Update(f Facts) (cs verdict.Checks, violation, unmet string) {
	defer func() { cs = cs.Qualified(f.KindID) }()
	learned, kept, onA, onB := f.Learned.Value, f.Kept.Value, f.OnA.Value, f.OnB.Value
	switch {
	case f.MeshBefore != "":
		return nil, "", f.Kind + ": before the update: " + f.MeshBefore
	case obs.Unknowns(f) != nil:
		return nil, "", ""
	case f.WriteErr != "" && f.Learned.State == "":
		return nil, "", f.Kind + ": " + f.WriteErr
	case learned != "1" && learned != "":
		cs.Fail(CheckReachesB, fmt.Sprintf("B learnt gpc0=%s from A's write of 1", learned))
		return cs, cs.Violation(f.Kind), ""
	case learned != "1":
		cs.Fail(CheckReachesB, fmt.Sprintf("A's write never reached B within %s", f.Bound))
		return cs, cs.Violation(f.Kind), ""
	}
	cs.Hold(CheckReachesB)
	switch {
	case f.BeforeErr != "":
		return cs, "", f.Kind + ": " + f.BeforeErr
	case f.Before != "" && kept != "1":
		return cs, "", fmt.Sprintf("%s: B held gpc0=%q after its %s, not A's 1 (a loss conf-reload-keeps-entries judges)", f.Kind, kept, f.Before)
	case f.WriteErr != "":
		return cs, "", f.Kind + ": " + f.WriteErr
	case onB != "2":
		return cs, "", fmt.Sprintf("%s: B's own update did not hold on B (gpc0=%q): A had nothing to learn", f.Kind, onB)
	}
	cs.Expect(CheckPushedBack, onA == "2", fmt.Sprintf("B's update (gpc0 2) did not reach A within %s (A holds gpc0=%q)", f.Bound, onA))
	return cs, cs.Violation(f.Kind), ""
}

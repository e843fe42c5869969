// Package judge decides a conf-learned-entries-obey-receiver check from
// what it observed: pure functions of recorded facts, with nothing of
// Docker's in their imports, so that `make unit` tests them alone.
package judge

import "github.com/harp-project/harp/harness/core/obs"

// SuiteID is the suite's id, the first part of its findings' signatures.
const SuiteID = "conf-learned-entries-obey-receiver"

// Evidence is what one check recorded: its kind and its facts.
type Evidence = obs.KindEvidence

// Facts are what one check observed: its kind, its unmet precondition,
// violations, what held, and the first reading harp could not make (which
// makes it decide nothing, obs.Unknowns).
type Facts = obs.KindRecord

// Check decides one check: an unmet precondition makes it say nothing,
// whatever it saw; otherwise every violation it saw counts.
func Check(f Facts) (violation, unmet string) { return f.Decide(f.Kind) }

// Package judge decides one conf-many-tables check from what it observed:
// pure functions of recorded facts, with nothing of Docker's in their
// imports, so that `make unit` tests them alone.
package judge

import (
	"strings"
	"time"

	"github.com/harp-project/harp/harness/core/obs"
	"github.com/harp-project/harp/harness/core/text"
)

// Facts are what one check observed.
type Facts struct {
	Kind    string        `json:"kind"`
	Tables  int           `json:"tables"`
	Entries int           `json:"entries"`
	Bound   time.Duration `json:"bound_ns"`
	Setup   string        `json:"setup,omitempty"`
	// Mesh (initial resync): what was down at the end of Bound.
	Mesh obs.Optional[[]string] `json:"mesh"`
	// Resync: "" finished, or HAProxy's unfinished flags.
	Resync obs.Optional[string] `json:"resync"`
	// Missing: table -> entries missing or wrong (not read when the
	// initial mesh never formed).
	Missing   obs.Optional[map[string]int] `json:"missing"`
	Took      time.Duration                `json:"took_ns"`
	LearnTook time.Duration                `json:"learn_took_ns,omitempty"`
	// FinalAfter: entries were missing once the learner showed its resync
	// finished, this long after the check began; nothing is taught after
	// that, so the wait ended there instead of at Bound.
	FinalAfter time.Duration `json:"final_after_ns,omitempty"`
}

// Check decides one check from what HAProxy showed (unknown readings are
// left to the one rule on observations). The initial resync never
// finishing is the property's own violation (nothing outside HAProxy
// stops it: both nodes run and reach each other, which the cluster suites
// check).
func Check(f Facts) (violation, unmet string) {
	r := obs.Record{Unmet: f.Setup} // unmet: says nothing, whatever was seen
	if down, ok := f.Mesh.Get(); ok && len(down) > 0 {
		r.Violated("with %d tables the nodes did not mesh and finish their initial resync within %s: %s", f.Tables, f.Bound, strings.Join(down, ", "))
	}
	if m, ok := f.Missing.Get(); ok && text.Sum(m) > 0 {
		when := "after " + f.Bound.String()
		if f.FinalAfter > 0 {
			when = "once its resync had finished (" + f.FinalAfter.Round(time.Millisecond).String() + ")"
		}
		r.Violated("%d of %d entries missing or wrong %s (%s)", text.Sum(m), f.Entries, when, PerTableText(m))
	}
	if unfinished, ok := f.Resync.Get(); ok && unfinished != "" {
		r.Violated("%s", unfinished)
	}
	return r.Decide(f.Kind)
}

// PerTableText names the tables short and by how many entries, the first
// five of them.
func PerTableText(m map[string]int) string { return text.Counts(m, "cluster/", 5, "tables") }

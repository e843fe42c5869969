// Package judge decides a conf-learned-entries-obey-receiver check from
// what it observed: pure functions of recorded facts, with nothing of
// Docker's in their imports, so that `make unit` tests them alone.
package judge

import (
	"fmt"
	"time"

	"github.com/harp-project/harp/harness/obs"
)

// SuiteID is the suite's id, the first part of its findings' signatures.
const SuiteID = "conf-learned-entries-obey-receiver"

// Evidence is what one check recorded.
type Evidence struct {
	Kind  string `json:"kind"`
	Facts Facts  `json:"facts"`
}

// Facts are what one check observed: its unmet precondition, violations,
// what held, and the first reading harp could not make (which makes it
// decide nothing, obs.Unknowns).
type Facts struct {
	Kind string `json:"kind"`
	obs.Record
}

// Check decides one check: an unmet precondition makes it say nothing,
// whatever it saw; otherwise every violation it saw counts.
func Check(f Facts) (violation, unmet string) { return f.Decide(f.Kind) }

// Unseen is why an entry a restarted B lacks says nothing ("" when it
// does): B may have learnt it at once and dropped it after expire (its
// own table's, which a correct build applies) before harp's first read,
// or in a pause between reads (a loaded machine). The first read's lateness
// is taken at its latest: B's worker's uptime, rounded down by HAProxy,
// plus a second, less how long ago harp first read the table.
func Unseen(uptime, sinceFirst, gap, expire time.Duration) string {
	if late := uptime + time.Second - sinceFirst; late >= expire {
		return fmt.Sprintf("harp first read B's table as late as %s after B's worker started (uptime %s, first read %s ago): an entry B learnt at its start could have expired (B's expire %s) before harp looked (a loaded machine?)", late.Round(time.Millisecond), uptime, sinceFirst.Round(time.Millisecond), expire)
	}
	if gap >= expire {
		return fmt.Sprintf("harp's reads of B's table paused for %s, beyond B's expire %s: an entry could have come and gone unseen (a loaded machine?)", gap.Round(time.Millisecond), expire)
	}
	return ""
}

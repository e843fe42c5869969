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

// ResyncTimeout is HAProxy's: a new process that has not learnt from a
// peer within 5 s of starting stops waiting and asks no one again.
const ResyncTimeout = 5 * time.Second

// LateLink is why an entry a restarted B lacks says nothing ("" when it
// does): B's link to A came up after its resync timeout, so its resync
// may have ended untaught (a loaded machine). When the link came up is
// B's worker's uptime less the handshake's age, both rounded down to
// seconds by HAProxy: taken at its latest.
func LateLink(uptime, hdshkAge time.Duration) string {
	if up := uptime + time.Second - hdshkAge; up > ResyncTimeout {
		return fmt.Sprintf("B's link to A came up as late as %s after B's worker started (uptime %s, handshake %s ago), beyond HAProxy's %s resync timeout: B's resync may have ended untaught (a loaded machine?)", up, uptime, hdshkAge, ResyncTimeout)
	}
	return ""
}

// Package judge decides a conf-learned-entries-obey-receiver check from
// what it observed: pure functions of recorded facts, with nothing of
// Docker's in their imports, so that `make unit` tests them alone.
package judge

import (
	"fmt"
	"strings"
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

// Facts are what one check observed. Unmet and Violations are filled by
// the check from what it read; Check orders them.
type Facts struct {
	Kind       string   `json:"kind"`
	Unmet      string   `json:"unmet,omitempty"`
	Violations []string `json:"violations,omitempty"`
	Observed   []string `json:"observed,omitempty"` // what held, for the report
	// Unread is the first reading harp could not make (an observation
	// failed): the check then decides nothing (obs.Unknowns).
	Unread obs.Optional[string] `json:"unread"`
}

// NotRead records a failed observation (the first one is kept).
func (f *Facts) NotRead(format string, args ...any) {
	if f.Unread.State == "" {
		f.Unread = obs.Opt(obs.Failure[string](format, args...))
	}
}

// Violated records a violation seen.
func (f *Facts) Violated(format string, args ...any) {
	f.Violations = append(f.Violations, fmt.Sprintf(format, args...))
}

// Held records what held, for the report.
func (f *Facts) Held(format string, args ...any) {
	f.Observed = append(f.Observed, fmt.Sprintf(format, args...))
}

// Check decides one check: an unmet precondition makes it say nothing,
// whatever it saw; otherwise every violation it saw counts.
func Check(f Facts) (violation, unmet string) {
	if f.Unmet != "" {
		return "", f.Kind + ": " + f.Unmet
	}
	if len(f.Violations) > 0 {
		return f.Kind + ": " + strings.Join(f.Violations, "; "), ""
	}
	return "", ""
}

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

// Package resync holds HAProxy's initial resync timeout and what a link
// that came up after it means for a verdict: value rules that judges
// share, with nothing heavy in their imports.
package resync

import (
	"fmt"
	"time"
)

// Timeout is HAProxy's: a new process that has not learnt from a peer
// within 5 s of starting stops waiting and asks no one again.
const Timeout = 5 * time.Second

// LateLink is why what a restarted process (who) lacks of its peer's says
// nothing ("" when it does): its link to peer came up after its resync
// timeout, so its resync may have ended untaught (a loaded machine). When
// the link came up is the worker's uptime less the handshake's age, both
// rounded down to seconds by HAProxy: taken at its latest.
func LateLink(who, peer string, uptime, hdshkAge time.Duration) string {
	if up := uptime + time.Second - hdshkAge; up > Timeout {
		return fmt.Sprintf("%s's link to %s came up as late as %s after %s's worker started (uptime %s, handshake %s ago), beyond HAProxy's %s resync timeout: %s's resync may have ended untaught (a loaded machine?)", who, peer, up, who, uptime, hdshkAge, Timeout, who)
	}
	return ""
}

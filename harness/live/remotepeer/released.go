package remotepeer

import (
	"fmt"
	"time"

	"github.com/harp-project/harp/harness/live/peers"
)

// Released waits at most d until HAProxy has closed a superseded
// session's socket, else says why not.
func Released(first *peers.Conn, d time.Duration) string {
	if !first.WaitClosed(d) {
		return fmt.Sprintf("HAProxy did not release the superseded session within %s (its socket is still open)", d)
	}
	if byPeer, why := first.Ended(); !byPeer {
		return fmt.Sprintf("harp's client ended the superseded session itself: %v", why)
	}
	return ""
}

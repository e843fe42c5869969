// Package judge decides a #3519 trial from what its window showed: pure
// functions of recorded facts, with nothing of Docker's in their imports,
// so that `make unit` tests them alone.
package judge

import (
	"fmt"
	"time"

	"github.com/harp-project/harp/harness/core/cliout"
	"github.com/harp-project/harp/harness/core/obs"
)

// LateCheck begins the unmet precondition of a replacement whose
// reconnect check comes after harp's first heartbeat.
const LateCheck = "HAProxy's next reconnect check"

// AttemptEnded begins the unmet precondition of a window in which an
// attempt of HAProxy's own to connect was released.
const AttemptEnded = "an attempt of HAProxy's own to connect, superseded and still retrying, ended"

// Facts are what one trial's window showed.
type Facts struct {
	Replace bool // the trial (a replacement), or the control
	NoCheck bool // show peers showed no reconnect timer: nothing to wait for
	// The replacement's next check comes after harp's first heartbeat,
	// which refreshes the alive flag: the trial could not see the bug.
	CheckAfterHeartbeat bool
	// An attempt of HAProxy's own to connect, superseded by a handshake
	// and still retrying when the watched session connected, was gone once
	// HAProxy closed the watched session: its release clears the alive
	// flag of whatever session is up, so the closing proves nothing.
	AttemptEnded bool
	Window       time.Duration        // HAProxy's next reconnect check plus the margin
	CheckPassed  time.Duration        // when show peers showed that check passed, the session kept (0: not seen; the window ran whole)
	Closing      obs.Optional[string] // how HAProxy closed the watched socket within the window (unknown: harp's client did)
	ClosedAfter  time.Duration        // ... after the superseded session was released
	Before       State                // the remote peer in show peers before the window
	After        obs.Optional[State]  // ... and after it
}

// State is what show peers says of the remote peer.
type State struct {
	Established     bool
	NoHbt, ProtoErr int64
}

// StateOf is what a show peers line says of the remote peer.
func StateOf(p cliout.Peer) State { return State{p.Established(), p.Int("no_hbt"), p.Int("proto_err")} }

// What names the watched session: the replacement, or the control's.
func (f Facts) What() string {
	if f.Replace {
		return "replacement"
	}
	return "control connection"
}

// Trial decides a trial from its window. The violation is HAProxy's own
// kill at its reconnect check: the socket closed by HAProxy, show peers
// agreeing, no_hbt up by one and proto_err unchanged. Any other closing,
// or a disagreement between the socket and show peers, is inconclusive;
// an unknown closing or show peers reading is left to the one rule.
func Trial(f Facts) (violation, unmet string) {
	_, closed := f.Closing.Get()
	a, read := f.After.Get()
	switch {
	case f.NoCheck:
		return "", fmt.Sprintf("show peers showed no reconnect check pending for the %s: no window to watch", f.What())
	case f.CheckAfterHeartbeat:
		return "", fmt.Sprintf("%s of the %s comes after harp's first heartbeat, which refreshes the alive flag", LateCheck, f.What())
	case f.AttemptEnded:
		return "", fmt.Sprintf("%s while the %s was watched: its release clears the alive flag", AttemptEnded, f.What())
	case !read || (f.Closing.State != "" && !closed): // unknown: the one rule's
		return "", ""
	case closed && a.Established:
		return "", fmt.Sprintf("the %s socket closed but show peers still shows the peer established", f.What())
	case closed && a.ProtoErr != f.Before.ProtoErr:
		return "", fmt.Sprintf("HAProxy closed the %s for a protocol error (proto_err %d -> %d), not at its reconnect check", f.What(), f.Before.ProtoErr, a.ProtoErr)
	case closed && a.NoHbt != f.Before.NoHbt+1:
		return "", fmt.Sprintf("HAProxy closed the %s without its reconnect check's kill (no_hbt %d -> %d)", f.What(), f.Before.NoHbt, a.NoHbt)
	case closed:
		return fmt.Sprintf("%s killed by HAProxy's reconnect check (no_hbt +1)", f.What()), ""
	case !a.Established:
		return "", fmt.Sprintf("the %s socket is open but show peers shows the peer not established", f.What())
	}
	return "", ""
}

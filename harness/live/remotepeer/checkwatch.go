package remotepeer

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/harp-project/harp/harness/core/cliout"
	"github.com/harp-project/harp/harness/core/obs"
	"github.com/harp-project/harp/harness/live/peers"
)

// CheckWatch is what a session of the remote peer showed through HAProxy's
// next reconnect check (WatchCheck).
type CheckWatch struct {
	NoCheck      bool                 // show peers showed no reconnect timer: nothing to wait for
	Late         bool                 // the check, rounded up, comes after harp's first heartbeat
	AttemptEnded bool                 // an attempt of HAProxy's own (Superseded.Attempts) was gone once HAProxy closed the session
	Window       time.Duration        // the check as show peers gave it, plus the margin
	CheckPassed  time.Duration        // when show peers showed the check passed, the session kept (0: not seen)
	Closing      obs.Optional[string] // how HAProxy closed the socket within the window (unknown: harp's client did)
	ClosedAfter  time.Duration        // ... after Superseded.Start
	After        obs.Optional[cliout.Peer]
}

const (
	// show peers rounds timers down to seconds: the check comes within a
	// second of what it shows.
	rounding = time.Second
	// A reconnect timer shown at 3 s or more right after it was lower was
	// set again to HAProxy's 5 s period: the check found the peer alive.
	passed = 3 * time.Second
)

// WatchCheck watches s's session (its last), sending nothing, until
// HAProxy's next reconnect check (read from s.Before) plus margin, and
// reads the remote peer after it (after is s.Before when no window ran).
// With beforeHeartbeat, a check that, rounded up, would come after harp's
// first heartbeat (which sets the alive flag) is Late and not watched.
// what names the session in the closing's reason.
func (p *Probe) WatchCheck(ctx context.Context, s Superseded, what string, beforeHeartbeat bool, margin time.Duration) (w CheckWatch, after cliout.Peer, err error) {
	watched := s.Conns[len(s.Conns)-1]
	d, never, ok := s.Before.Delay("reconnect")
	if !ok || never {
		w.NoCheck = true
		return w, s.Before, nil
	}
	w.Window = d + margin
	if beforeHeartbeat && time.Since(s.Handshake)+d+rounding >= peers.DefaultOptions.Heartbeat {
		w.Late = true
		return w, s.Before, nil
	}
	timer := time.NewTimer(w.Window)
	defer timer.Stop()
	poll := time.NewTicker(100 * time.Millisecond)
	defer poll.Stop()
	// The window ends at the check once show peers shows it passed: the
	// timer set again to HAProxy's full reconnect period with the session
	// still established. Only in an answer read before harp's first
	// heartbeat (with a tenth of a second to spare), which sets the timer
	// again too; a kill sets it to at most 2049 ms.
	last, heartbeat := d, s.Handshake.Add(peers.DefaultOptions.Heartbeat-100*time.Millisecond)
watch:
	for {
		select {
		case <-watched.Closed():
			at, why := watched.ClosedAt()
			if w.ClosedAfter, w.Closing = at.Sub(s.Start), obs.Opt(obs.Value(fmt.Sprint(why))); !watched.ClosedByPeer() { // harp's side: what HAProxy would have done is unknown
				w.Closing = obs.Opt(obs.Failure[string]("harp's client ended the %s session itself: %v", what, why))
			}
			// An attempt's release can only make HAProxy kill the session,
			// never keep it: one that ended, before or after this closing
			// (it cannot be told), leaves the closing unexplained.
			w.AttemptEnded = p.attemptEnded(ctx, s.Attempts)
			break watch
		case <-timer.C:
			break watch
		case <-poll.C:
			r, err := p.State(ctx)
			cur, never, ok := r.Delay("reconnect")
			if err != nil || !ok || never {
				continue // a reading that failed decides nothing
			}
			if cur > last && cur >= passed && r.Established() && time.Now().Before(heartbeat) {
				w.CheckPassed = time.Since(s.Start)
				break watch
			}
			last = cur
		case <-ctx.Done():
			return w, after, ctx.Err()
		}
	}
	after, err = p.State(ctx)
	w.After = obs.Opt(obs.From(after, err))
	return w, after, nil
}

// attemptEnded says whether one of HAProxy's own attempts to connect is
// gone from show sess (a failed reading says nothing).
func (p *Probe) attemptEnded(ctx context.Context, attempts []string) bool {
	if len(attempts) == 0 {
		return false
	}
	_, out, err := p.Streams(ctx)
	if err != nil {
		return false
	}
	for _, a := range attempts {
		if !slices.Contains(out, a) {
			return true
		}
	}
	return false
}

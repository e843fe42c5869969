package issue3519

// What the suite reads and does on its node: its own code (#43), moved
// from the toolkit, built on the node's primitives.

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/harp-project/harp/harness/core/cliout"
	"github.com/harp-project/harp/harness/core/obs"
	"github.com/harp-project/harp/harness/core/peerwire"
	"github.com/harp-project/harp/harness/live/peers"
	"github.com/harp-project/harp/harness/live/remotepeer"
)

// collided begins the unmet reason of a handshake that collided with a
// session of HAProxy's own (coll up in show peers).
const collided = "collision with HAProxy's own session"

// superseded is what Supersede made: harp's sessions of the remote peer
// and the state show peers gave once the watched one was the only one.
type superseded struct {
	Conns     []*peers.Conn // every session dialled, the watched one last: the caller closes them
	Before    cliout.Peer   // the remote peer once the watched session was the only one
	Start     time.Time     // when the watched session became the only one
	Handshake time.Time     // of the session last dialled: its first heartbeat is due peers.DefaultOptions.Heartbeat later
	Attempts  []string      // HAProxy's own attempts to connect still retrying before the first dial (keepAttempts)
}

// supersede makes a session of the remote peer and, with replace, a
// second one that supersedes it: HAProxy keeps the new session and must
// release the first (its socket closed by HAProxy) within release. It
// starts once Settled (within 15 s, quiet 0: a handshake may follow
// HAProxy's reconnect timer closely, and one that collides with HAProxy's
// own attempt anyway raises coll; waiting for a timer shown as 1s instead
// would often wait out that attempt, whose connects to a dead port are
// retried for 3 s). It checks that neither handshake collided with a
// session of HAProxy's own (unmet, beginning with collided) and that the
// watched session is established.
func (p *peerProbe) supersede(ctx context.Context, replace, keepAttempts bool, release time.Duration) (s superseded, unmet string, err error) {
	if s.Attempts, err = p.Settled(ctx, 0, 15*time.Second, keepAttempts); err != nil {
		return s, "a session of the remote peer from before, or its stream, never ended", nil
	}
	r0, err := p.State(ctx)
	if err != nil {
		return s, "", err
	}
	coll := r0.Int("coll")
	dial := func(which string) (string, error) {
		c, status, err := p.Dial(ctx, peers.DefaultOptions)
		s.Handshake = time.Now()
		if err != nil {
			return "", err
		}
		if c != nil {
			s.Conns = append(s.Conns, c)
		}
		if status != peers.StatusSuccess {
			return fmt.Sprintf("%s handshake answered %d", which, status), nil
		}
		return "", nil
	}
	if unmet, err := dial("first"); err != nil || unmet != "" {
		return s, unmet, err
	}
	r1, err := p.Established(ctx, 5*time.Second)
	if err != nil {
		return s, "show peers never showed the first session established", nil
	}
	// The first handshake must not have replaced a session of HAProxy's own.
	if r1.Int("coll") != coll {
		return s, fmt.Sprintf("%s: the first handshake raised coll from %d to %d", collided, coll, r1.Int("coll")), nil
	}
	if replace {
		if unmet, err := dial("replacement"); err != nil || unmet != "" {
			return s, unmet, err
		}
		if unmet = remotepeer.Released(s.Conns[0], release); unmet != "" {
			return s, unmet, nil
		}
	}
	s.Start = time.Now()
	if s.Before, err = p.State(ctx); err != nil {
		return s, "", err
	}
	if want := coll + map[bool]int64{false: 0, true: 1}[replace]; s.Before.Int("coll") != want {
		return s, fmt.Sprintf("%s: coll went from %d to %d, want %d", collided, coll, s.Before.Int("coll"), want), nil
	}
	if !s.Before.Established() {
		return s, "show peers does not show the watched session established before the window", nil
	}
	return s, "", nil
}

// checkWatch is what a session of the remote peer showed through HAProxy's
// next reconnect check (WatchCheck).
type checkWatch struct {
	NoCheck      bool                 // show peers showed no reconnect timer: nothing to wait for
	Late         bool                 // the check, rounded up, comes after harp's first heartbeat
	AttemptEnded bool                 // an attempt of HAProxy's own (superseded.Attempts) was gone once HAProxy closed the session
	Window       time.Duration        // the check as show peers gave it, plus the margin
	CheckPassed  time.Duration        // when show peers showed the check passed, the session kept (0: not seen)
	Closing      obs.Optional[string] // how HAProxy closed the socket within the window (unknown: harp's client did)
	ClosedAfter  time.Duration        // ... after superseded.Start
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

// watchCheck watches s's session (its last), sending nothing, until
// HAProxy's next reconnect check (read from s.Before) plus margin, and
// reads the remote peer after it (after is s.Before when no window ran).
// With beforeHeartbeat, a check that, rounded up, would come after harp's
// first heartbeat (which sets the alive flag) is Late and not watched.
// what names the session in the closing's reason.
func (p *peerProbe) watchCheck(ctx context.Context, s superseded, what string, beforeHeartbeat bool, margin time.Duration) (w checkWatch, after cliout.Peer, err error) {
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
func (p *peerProbe) attemptEnded(ctx context.Context, attempts []string) bool {
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

// answerResync waits at most timeout for the section's initial resync to
// finish (WaitResync) while harp's peer, as the remote peer, answers
// HAProxy's resync request in a session of its own (an up-to-date peer
// with nothing to teach says resync finished), so that the resync ends
// when HAProxy hears it rather than at its 5 s timeout; a build that never
// asks still finishes by its timeout. The session is closed when it
// returns; note says how the resync finished, for the trials that follow.
func (p *peerProbe) answerResync(ctx context.Context, timeout time.Duration) (note, unmet string, err error) {
	t0 := time.Now()
	c, status, err := p.Dial(ctx, peers.Options{Answer: true})
	if err != nil {
		return "", "", fmt.Errorf("the resync session: %w", err)
	}
	unmet = p.WaitResync(ctx, timeout)
	took := time.Since(t0).Round(time.Millisecond)
	switch {
	case c == nil:
		note = fmt.Sprintf("initial resync finished by HAProxy's own timeout after %s (its handshake with harp's peer was answered %d)", took, status)
	case askedResync(c):
		note = fmt.Sprintf("initial resync finished %s after the node was ready: HAProxy asked harp's peer (as %s, in a session of its own, closed before the trials) and harp answered resync finished", took, p.Remote)
	default:
		note = fmt.Sprintf("initial resync finished %s after the node was ready, without asking harp's peer", took)
	}
	if c != nil {
		c.Close()
	}
	return note, unmet, nil
}

// askedResync says whether HAProxy sent the session a resync request.
func askedResync(c *peers.Conn) bool {
	for _, e := range c.Events() {
		if e.Msg.Class == peerwire.ClassControl && e.Msg.Type == peerwire.CtrlResyncRequest {
			return true
		}
	}
	return false
}

// killControl is a positive control for a suite that watches a
// replacement session stay open: harp must see one closed within d when
// HAProxy is told to kill it (`shutdown session`), else a replacement that
// stays open would prove nothing (unmet, "positive control failed: ...").
// A kill by HAProxy's own reconnect check first (no_hbt up), or harp's
// client ending it, does not count: it is tried again, at most tries
// times, as is a try whose Supersede was unmet.
func (p *peerProbe) killControl(ctx context.Context, tries int, d time.Duration) (unmet string, err error) {
	why := ""
	for try := 1; try <= tries; try++ {
		u, killedFirst, err := p.killOnce(ctx, d)
		if err != nil || (u == "" && !killedFirst) {
			return u, err
		}
		if why = u; killedFirst {
			why = "the reconnect check killed it first"
		}
		if strings.HasPrefix(u, "positive control failed") {
			return u, nil
		}
	}
	return "positive control could not be run: " + why, nil
}

// killOnce is one try; its connections are closed when it returns.
func (p *peerProbe) killOnce(ctx context.Context, d time.Duration) (unmet string, killedFirst bool, err error) {
	s, u, err := p.supersede(ctx, true, true, d) // it kills the replacement itself
	defer peers.CloseAll(s.Conns)
	if err != nil || u != "" {
		return u, false, err
	}
	if err := p.Kill(ctx); err != nil {
		return "", false, fmt.Errorf("positive control: %w", err)
	}
	watched := s.Conns[len(s.Conns)-1]
	if !watched.WaitClosed(d) {
		return fmt.Sprintf("positive control failed: a replacement HAProxy was told to kill (shutdown session) was not seen closed within %s", d), false, nil
	}
	after, err := p.State(ctx)
	if err != nil {
		return "", false, err
	}
	if after.Int("no_hbt") != s.Before.Int("no_hbt") || !watched.ClosedByPeer() {
		return "", true, nil
	}
	return "", false, nil
}

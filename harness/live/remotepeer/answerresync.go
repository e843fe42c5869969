package remotepeer

import (
	"context"
	"fmt"
	"time"

	"github.com/harp-project/harp/harness/core/peerwire"
	"github.com/harp-project/harp/harness/live/peers"
)

// AnswerResync waits at most timeout for the section's initial resync to
// finish (WaitResync) while harp's peer, as the remote peer, answers
// HAProxy's resync request in a session of its own (an up-to-date peer
// with nothing to teach says resync finished), so that the resync ends
// when HAProxy hears it rather than at its 5 s timeout; a build that never
// asks still finishes by its timeout. The session is closed when it
// returns; note says how the resync finished, for the trials that follow.
func (p *Probe) AnswerResync(ctx context.Context, timeout time.Duration) (note, unmet string, err error) {
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

package remotepeer

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/harp-project/harp/harness/live/peers"
)

// KillControl is a positive control for a suite that watches a
// replacement session stay open: harp must see one closed within d when
// HAProxy is told to kill it (`shutdown session`), else a replacement that
// stays open would prove nothing (unmet, "positive control failed: ...").
// A kill by HAProxy's own reconnect check first (no_hbt up), or harp's
// client ending it, does not count: it is tried again, at most tries
// times, as is a try whose Supersede was unmet.
func (p *Probe) KillControl(ctx context.Context, tries int, d time.Duration) (unmet string, err error) {
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
func (p *Probe) killOnce(ctx context.Context, d time.Duration) (unmet string, killedFirst bool, err error) {
	s, u, err := p.Supersede(ctx, true, true, d) // it kills the replacement itself
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

package node

import (
	"context"
	"strings"
	"time"
)

// Alive says whether the worker holding the stats socket answers `show
// info` within timeout (asked every 100 ms, each in the transcript).
func (n *Node) Alive(ctx context.Context, timeout time.Duration) bool {
	ok := false
	Poll(ctx, timeout, 100*time.Millisecond, func() (bool, error) {
		out, err := n.Stats(ctx, "show info")
		ok = err == nil && strings.Contains(out, "Pid:")
		return ok, nil
	})
	return ok
}

// DiedSince polls the master's log (every 200 ms, up to timeout: it logs a
// worker's exit once it has reaped it) for a worker death after the first
// had exits (a count of Exits): the serving worker's exit, or any on a
// signal. An old worker leaving after its last client is no death.
func (n *Node) DiedSince(ctx context.Context, had int, timeout time.Duration) bool {
	died := false
	Poll(ctx, timeout, 200*time.Millisecond, func() (bool, error) {
		es, err := n.Exits(ctx)
		if err != nil || len(es) <= had {
			return false, nil
		}
		for _, e := range es[had:] {
			died = died || e.Current || e.Code > 128
		}
		return died, nil
	})
	return died
}

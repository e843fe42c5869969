package fixrun

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/harp-project/harp/harness/live/cli"
	"github.com/harp-project/harp/harness/live/node"
)

// ReloadHoldingOld holds a connection on the case's frontend hold (a TCP
// frontend that waits for a request that never comes), proven a session
// of it in show stat, then reloads the node: the old worker stays for
// that session. The reload waits for the new worker, and 3 s for an old
// one that left anyway: on a signal, died says so (HAProxy's answer to
// the reload, which the case reports as it is), else err is harp's
// failure to set the case up. done closes the held connection; it is
// never nil.
func ReloadHoldingOld(ctx context.Context, n *node.Node) (r node.Reload, died string, done func(), err error) {
	done = func() {}
	hold := Port("hold")
	addr, err := n.DirectAddr(ctx, hold)
	if err != nil {
		return r, "", done, err
	}
	held, err := cli.Dial(ctx, addr, hold)
	if err != nil {
		return r, "", done, fmt.Errorf("the held connection: %w", err)
	}
	done = func() { held.Close() }
	sessions := func() (int64, error) { return n.FrontendSessions(ctx, "hold") }
	if _, err := node.UntilErr(ctx, 5*time.Second, 50*time.Millisecond, sessions, func(c int64) bool { return c == 1 }); err != nil {
		return r, "", done, fmt.Errorf("the held connection was never a session of frontend hold: %w", err)
	}
	if r, err = n.Reload(ctx, 3*time.Second); err != nil {
		return r, "", done, err
	}
	if r.OldExited {
		if exits, err := n.Exits(ctx); err == nil {
			for _, e := range exits {
				if e.PID == r.OldPID && e.Code >= 128 {
					return r, fmt.Sprintf("the old worker died after the reload: %s", strings.TrimSpace(e.Line)), done, nil
				}
			}
		}
		return r, "", done, fmt.Errorf("the old worker %d left although a session of its was held open", r.OldPID)
	}
	return r, "", done, nil
}

package node

import (
	"context"
	"time"

	"github.com/harp-project/harp/harness/core/cliout"
)

// WaitGone reads one key every interval until a reading that succeeded
// lacks it, or timeout passes (WaitEntry): held is whether the last
// reading still found it, at when the last successful reading was made,
// and err the last reading's error (whether the key was held is then
// unknown).
func (n *Node) WaitGone(ctx context.Context, pid int, table, key string, timeout, interval time.Duration) (at time.Time, held bool, err error) {
	_, held, err = n.WaitEntry(ctx, pid, table, key, timeout, interval, func(_ cliout.Entry, ok bool) bool {
		at = time.Now()
		return !ok
	})
	return at, held, err
}

package node

import (
	"context"
	"time"
)

// WaitTableUsed polls `show table <table>` every 200ms until it holds want
// entries, or timeout (ErrDeadline); a failed read ends it with that
// error (unlike the waits that count one as not yet).
func (n *Node) WaitTableUsed(ctx context.Context, pid int, table string, want int, timeout time.Duration) error {
	return Poll(ctx, timeout, 200*time.Millisecond, func() (bool, error) {
		t, err := n.Table(ctx, pid, table)
		return err == nil && t.Used == want, err
	})
}

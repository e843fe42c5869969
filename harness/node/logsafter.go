package node

import (
	"context"
	"strings"
	"time"
)

// LogsAfter is what the node printed after before, its output read
// earlier (Logs): all of it when the output no longer begins with before.
func (n *Node) LogsAfter(ctx context.Context, before string) (string, error) {
	logs, err := n.Logs(ctx)
	if err != nil {
		return "", err
	}
	return strings.TrimPrefix(logs, before), nil
}

// WaitLogsAfter polls LogsAfter(before) every interval until done holds
// for it or timeout passes (as Poll); a failed read counts as not yet.
func (n *Node) WaitLogsAfter(ctx context.Context, before string, timeout, interval time.Duration, done func(fresh string) bool) error {
	return Poll(ctx, timeout, interval, func() (bool, error) {
		fresh, err := n.LogsAfter(ctx, before)
		return err == nil && done(fresh), nil
	})
}

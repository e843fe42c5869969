package node

import (
	"context"
	"errors"
	"strings"
	"time"
)

// ErrLogsRewritten: the node's output no longer begins with what was read
// earlier (a log driver rotated or cut it), so what came after that read
// cannot be told; taking all of it would blame this moment for earlier
// lines.
var ErrLogsRewritten = errors.New("the node's output no longer begins with what was read earlier (rotated or cut): what it printed since cannot be told")

// LogsAfter is what the node printed after before, its output read
// earlier (Logs); ErrLogsRewritten when the output no longer begins with
// before.
func (n *Node) LogsAfter(ctx context.Context, before string) (string, error) {
	logs, err := n.Logs(ctx)
	if err != nil {
		return "", err
	}
	return logsAfter(logs, before)
}

func logsAfter(logs, before string) (string, error) {
	fresh, ok := strings.CutPrefix(logs, before)
	if !ok {
		return "", ErrLogsRewritten
	}
	return fresh, nil
}

// WaitLogsAfter polls LogsAfter(before) every interval until done holds
// for it or timeout passes (as Poll); a failed read counts as not yet.
func (n *Node) WaitLogsAfter(ctx context.Context, before string, timeout, interval time.Duration, done func(fresh string) bool) error {
	return Poll(ctx, timeout, interval, func() (bool, error) {
		fresh, err := n.LogsAfter(ctx, before)
		return err == nil && done(fresh), nil
	})
}

package node

import (
	"context"
	"time"
)

// Hold waits d, or less when ctx ends first: a state kept for a while
// (the hold is the test), never a wait to decide that something is absent
// (Poll).
func Hold(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

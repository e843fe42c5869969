package node

import (
	"context"
	"fmt"
	"time"
)

// ErrDeadline is returned by Poll when the condition never held in time.
var ErrDeadline = fmt.Errorf("deadline passed")

// Poll calls cond every interval until it reports true, returns an error,
// or timeout passes (then ErrDeadline, wrapped with the timeout).
func Poll(ctx context.Context, timeout, interval time.Duration, cond func() (bool, error)) error {
	deadline := time.Now().Add(timeout)
	for {
		ok, err := cond()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w (%s)", ErrDeadline, timeout)
		}
		t := time.NewTimer(interval)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

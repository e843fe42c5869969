package node

import (
	"context"
	"time"
)

// UntilErr is Until where a failed read ends the wait (Poll's rule, as
// in WaitTableUsed): the last reading that succeeded, and nil when ok
// held for it, else the read's error, ErrDeadline (wrapped with the
// timeout) or the context's. It is the loop of a suite whose wait must
// not outlast a reading it could not make (a count to compare, a state
// to report), written once.
func UntilErr[T any](ctx context.Context, timeout, interval time.Duration, read func() (T, error), ok func(T) bool) (last T, err error) {
	err = Poll(ctx, timeout, interval, func() (bool, error) {
		v, err := read()
		if err != nil {
			return false, err
		}
		last = v
		return ok(v), nil
	})
	return last, err
}

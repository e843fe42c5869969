package node

import (
	"context"
	"time"
)

// Until calls read every interval until ok holds for a reading or timeout
// passes (as Poll): the last reading that succeeded, and whether ok held
// for it. A failed read counts as not yet, the next may succeed; a read
// that always failed gives the zero T. It is the loop of a suite that
// waits for the state a command should leave (a limit that shows on the
// admin socket, a counter that reached a value), written once.
func Until[T any](ctx context.Context, timeout, interval time.Duration, read func() (T, error), ok func(T) bool) (last T, held bool) {
	err := Poll(ctx, timeout, interval, func() (bool, error) {
		v, err := read()
		if err != nil {
			return false, nil
		}
		last = v
		return ok(v), nil
	})
	return last, err == nil
}

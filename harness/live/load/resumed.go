package load

import (
	"context"
	"time"

	"github.com/harp-project/harp/harness/core/obs"
)

// Resumed is how traffic to an address came back after a disruption (a
// limit raised, a frontend enabled, a reload): how long until a request
// of harp's was served, or, when none was within the wait, a count of
// the frontend's responses read at the start and after it. No request of
// harp's served is not yet traffic lost: a frontend whose count went up
// meanwhile served others, and harp's request waited in its queue.
type Resumed struct {
	Took          time.Duration
	Served        bool
	Before, After obs.Of[int64] // After: read only when none was served
}

// WaitResumed reads count, then sends requests to addr (WaitServed) for
// up to wait, and reads count again when none was served. Took runs from
// before the first read.
func WaitResumed(ctx context.Context, addr string, wait time.Duration, count func() obs.Of[int64]) Resumed {
	t0 := time.Now()
	r := Resumed{Before: count()}
	if r.Served = WaitServed(ctx, addr, wait); r.Served {
		r.Took = time.Since(t0)
	} else {
		r.After = count()
	}
	return r
}

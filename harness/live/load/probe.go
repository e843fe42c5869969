package load

import (
	"context"
	"time"
)

// Probe sends up to tries single GETs (Get) to addr until one is answered
// 200: whether one was, and how long the last one took. One lost request
// is not a server that does not answer.
func Probe(ctx context.Context, addr string, tries int) (ok bool, took time.Duration) {
	for try := 0; try < tries && !ok; try++ {
		t0 := time.Now()
		ok = Get(ctx, addr) == 200
		took = time.Since(t0)
	}
	return ok, took
}

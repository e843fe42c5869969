package load

import (
	"context"
	"sync"
)

// Background runs Attack(ctx, o) until stop is called (or o.Duration
// passes). stop ends it, waits for it and gives its result; a second call
// gives the same result.
func Background(ctx context.Context, o Options) (stop func() Result) {
	actx, cancel := context.WithCancel(ctx)
	var r Result
	done := make(chan struct{})
	go func() {
		defer close(done)
		r, _ = Attack(actx, o)
	}()
	var once sync.Once
	return func() Result {
		once.Do(func() {
			cancel()
			<-done
		})
		return r
	}
}

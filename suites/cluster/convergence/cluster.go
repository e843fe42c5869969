package convergence

// What the suite does on its cluster: its own code (#43), moved from
// harness/live/cluster.

import (
	"context"
	"sync"
	"time"

	"github.com/harp-project/harp/harness/live/cluster"
	"github.com/harp-project/harp/harness/live/node"
)

// spreadFrom is cluster.Spread with each key's deadline counted from its own write
// (as w records it): it polls until every key is on every member, or the
// writer has finished and every key still missing is past its deadline.
func spreadFrom(ctx context.Context, members []*cluster.Member, table string, keys []string, w *writer, timeout time.Duration) map[string]time.Time {
	seen := map[string]time.Time{}
	_ = node.Poll(ctx, 2*timeout+time.Minute, 20*time.Millisecond, func() (bool, error) {
		written, finished := w.soFar()
		on := map[string]int{}
		for _, m := range members {
			if t, err := m.Table(ctx, table); err == nil {
				for _, e := range t.Entries {
					on[e.Key]++
				}
			}
		}
		now, overdue := time.Now(), true
		for _, k := range keys {
			if _, done := seen[k]; done {
				continue
			}
			if on[k] == len(members) {
				seen[k] = now
			} else if at, ok := written[k]; !ok || now.Sub(at) < timeout {
				overdue = false
			}
		}
		return len(seen) == len(keys) || (finished && overdue), nil
	})
	return seen
}

// writer writes keys in the background, recording when each was written.
type writer struct {
	mu       sync.Mutex
	written  map[string]time.Time
	finished bool
	wg       sync.WaitGroup
	err      error
}

// write starts f, which tells wrote each key it has written.
func write(ctx context.Context, f func(ctx context.Context, wrote func(key string)) error) *writer {
	w := &writer{written: map[string]time.Time{}}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		err := f(ctx, func(k string) {
			w.mu.Lock()
			w.written[k] = time.Now()
			w.mu.Unlock()
		})
		w.mu.Lock()
		w.err, w.finished = err, true
		w.mu.Unlock()
	}()
	return w
}

// soFar is when each key was written so far, and whether the writer has
// finished.
func (w *writer) soFar() (map[string]time.Time, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make(map[string]time.Time, len(w.written))
	for k, t := range w.written {
		out[k] = t
	}
	return out, w.finished
}

// done waits for the writes and returns when each key was written.
func (w *writer) done() (map[string]time.Time, error) {
	w.wg.Wait()
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.written, w.err
}

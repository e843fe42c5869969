package cluster

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/harp-project/harp/harness/core/verdict"
)

// ReloadEach reloads every member's node (node.Reload: SIGUSR2, waited for
// on the master CLI within timeout), noting each new worker in t: all at
// once, or one after another. One after another, between (when set) runs
// after each reload that succeeded, before the next; a problem it returns
// ends the round. A failed reload ends it too. It returns what went wrong:
// "<member>: <error>" for a reload, between's problem as it said it.
func ReloadEach(ctx context.Context, t *verdict.Trial, members []*Member, simultaneous bool, timeout time.Duration, between func(m *Member) string) (problems []string) {
	var mu sync.Mutex // reloads run concurrently when simultaneous
	one := func(m *Member) bool {
		rl, err := m.Node.Reload(ctx, timeout)
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", m.Name, err))
			return false
		}
		t.Notef("%s: new worker %d listed %s after SIGUSR2", m.Name, rl.NewPID, rl.NewUp.Round(time.Millisecond))
		return true
	}
	if simultaneous {
		var wg sync.WaitGroup
		for _, m := range members {
			wg.Go(func() { one(m) })
		}
		wg.Wait()
		return problems
	}
	for _, m := range members {
		if !one(m) {
			break
		}
		if between == nil {
			continue
		}
		if p := between(m); p != "" {
			return append(problems, p)
		}
	}
	return problems
}

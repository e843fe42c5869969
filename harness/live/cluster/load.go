package cluster

import (
	"context"
	"sync"
	"time"

	"github.com/harp-project/harp/harness/live/load"
)

// WriteLoad sends rate requests/s with vegeta to every member's frontend,
// each tracking n keys of its own (LoadKeys), until stop is called, which
// returns each member's result, in order.
func WriteLoad(ctx context.Context, members []*Member, rate, n int) (stop func() []load.Result) {
	loadCtx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	results := make([]load.Result, len(members))
	for i, m := range members {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Until stop: Duration only bounds a load never stopped.
			results[i], _ = load.Attack(loadCtx, load.Options{URL: "http://" + m.HTTP + "/", Rate: rate, Duration: 10 * time.Minute,
				Timeout: 5 * time.Second, KeyHeader: "x-key", Keys: LoadKeys(m, n)})
		}()
	}
	return func() []load.Result {
		cancel()
		wg.Wait()
		return results
	}
}

// LoadKeys are the first n keys WriteLoad tracks on a member.
func LoadKeys(m *Member, n int) []string { return Keys("load-"+m.Name+"-", n) }

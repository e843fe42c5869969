package reloads

// What the suite reads and does: its own code (#43), moved
// from the toolkit, built on its primitives.

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/harp-project/harp/harness/live/cluster"

	"github.com/harp-project/harp/harness/core/verdict"
	"github.com/harp-project/harp/harness/live/load"
)

// writeLoad sends rate requests/s with vegeta to every member's frontend,
// each tracking n keys of its own (cluster.LoadKeys), until stop is called, which
// returns each member's result, in order.
func writeLoad(ctx context.Context, members []*cluster.Member, rate, n int) (stop func() []load.Result) {
	loadCtx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	results := make([]load.Result, len(members))
	for i, m := range members {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Until stop: Duration only bounds a load never stopped.
			results[i], _ = load.Attack(loadCtx, load.Options{URL: "http://" + m.HTTP + "/", Rate: rate, Duration: 10 * time.Minute,
				Timeout: 5 * time.Second, KeyHeader: "x-key", Keys: cluster.LoadKeys(m, n)})
		}()
	}
	return func() []load.Result {
		cancel()
		wg.Wait()
		return results
	}
}

// loadArrived waits, up to timeout, until the first key of each member's
// write load (writeLoad, cluster.LoadKeys) is on every member in cluster.DefaultTable; it
// gives how many of those keys were, of how many.
func loadArrived(ctx context.Context, members []*cluster.Member, timeout time.Duration) (seen, of int) {
	var firsts []string
	for _, m := range members {
		firsts = append(firsts, cluster.LoadKeys(m, 1)...)
	}
	return len(cluster.Spread(ctx, members, cluster.DefaultTable, firsts, timeout)), len(firsts)
}

// noteLoad notes each member's write load result (what writeLoad's stop
// gave, in the members' order) in t, and gives a problem for each member
// no load reached: no request sent, or none succeeded.
func noteLoad(t *verdict.Trial, members []*cluster.Member, results []load.Result) (problems []string) {
	for i, res := range results {
		t.Notef("write load on %s: %s", members[i].Name, res)
		if res.Requests == 0 || res.Success == 0 {
			problems = append(problems, fmt.Sprintf("no write load reached %s (%s)", members[i].Name, res))
		}
	}
	return problems
}

// showMasterLogs notes, for each member in turn, every process exit its
// master logged with a non-zero code, and shows the last lines of its
// master log; a member whose log harp could not read is skipped.
func showMasterLogs(ctx context.Context, t *verdict.Trial, members []*cluster.Member, lines int) {
	for _, m := range members {
		if exits, err := m.Node.Exits(ctx); err == nil {
			for _, e := range exits {
				if e.Code != 0 {
					t.Notef("%s: %s", m.Name, e.Line)
				}
			}
		}
		m.Node.ShowLogs(ctx, t, m.Name+" master log (last lines)", lines)
	}
}

// reloadEach reloads every member's node (node.Reload: SIGUSR2, waited for
// on the master CLI within timeout), noting each new worker in t: all at
// once, or one after another. One after another, between (when set) runs
// after each reload that succeeded, before the next; a problem it returns
// ends the round. A failed reload ends it too. It returns what went wrong:
// "<member>: <error>" for a reload, between's problem as it said it.
func reloadEach(ctx context.Context, t *verdict.Trial, members []*cluster.Member, simultaneous bool, timeout time.Duration, between func(m *cluster.Member) string) (problems []string) {
	var mu sync.Mutex // reloads run concurrently when simultaneous
	one := func(m *cluster.Member) bool {
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

// presence says how many of the keys each member holds.
func presence(ctx context.Context, members []*cluster.Member, table string, ks []string) string {
	var parts []string
	for _, m := range members {
		n := m.Holds(ctx, table, ks)
		if held, ok := n.Get(); ok {
			parts = append(parts, fmt.Sprintf("%s holds %d of %d", m.Name, held, len(ks)))
		} else {
			parts = append(parts, m.Name+": "+n.Why)
		}
	}
	return strings.Join(parts, ", ")
}

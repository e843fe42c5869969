package manytables

import (
	"context"
	"fmt"
	"time"

	"github.com/harp-project/harp/harness/core/obs"
	"github.com/harp-project/harp/harness/live/node"
)

// holding is what one table must hold: each key with its value of a field.
type holding struct {
	Table        string
	Keys, Values []string
}

// setHoldings writes each table's keys with their values of field
// (SetEntries, one table after another); the first error ends it.
func setHoldings(ctx context.Context, n *node.Node, pid int, field string, hs []holding) error {
	for _, h := range hs {
		if err := n.SetEntries(ctx, pid, h.Table, field, h.Keys, h.Values); err != nil {
			return err
		}
	}
	return nil
}

// waitHoldings polls a worker every 100 ms until every table holds every
// key with its value of field, or timeout, or final says that what is
// still short can no longer come (final is asked after a short reading,
// and decides on the next reading, begun after it said so). It gives the
// tables still short (entries missing or wrong, by count) in the reading
// that decided, and how long it took. A table that could not be read
// makes that reading unknown, not short: past the deadline such a reading
// is retried for 5 s more before it is the answer.
func waitHoldings(ctx context.Context, n *node.Node, pid int, field string, hs []holding, timeout time.Duration, final func() bool) (obs.Of[map[string]int], time.Duration) {
	t0 := time.Now()
	deadline := t0.Add(timeout)
	decided := false
	for {
		miss, failed := map[string]int{}, ""
		for _, h := range hs {
			t, err := n.Table(ctx, pid, h.Table)
			if err != nil {
				failed = fmt.Sprintf("reading %s: %v", h.Table, err)
				break
			}
			if lost, wrong := t.Differ(field, h.Keys, h.Values); len(lost)+len(wrong) > 0 {
				miss[h.Table] = len(lost) + len(wrong)
			}
		}
		if failed == "" && (len(miss) == 0 || decided) {
			return obs.Value(miss), time.Since(t0)
		}
		now := time.Now()
		if ctx.Err() != nil || (now.After(deadline) && (failed == "" || now.After(deadline.Add(5*time.Second)))) {
			if failed != "" {
				return obs.Failure[map[string]int]("%s", failed), time.Since(t0)
			}
			return obs.Value(miss), time.Since(t0)
		}
		if failed == "" && final != nil && final() {
			decided = true
			continue
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}

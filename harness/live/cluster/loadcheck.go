package cluster

import (
	"context"
	"fmt"
	"time"

	"github.com/harp-project/harp/harness/core/verdict"
	"github.com/harp-project/harp/harness/live/load"
)

// LoadArrived waits, up to timeout, until the first key of each member's
// write load (WriteLoad, LoadKeys) is on every member in DefaultTable; it
// gives how many of those keys were, of how many.
func LoadArrived(ctx context.Context, members []*Member, timeout time.Duration) (seen, of int) {
	var firsts []string
	for _, m := range members {
		firsts = append(firsts, LoadKeys(m, 1)...)
	}
	return len(Spread(ctx, members, DefaultTable, firsts, timeout)), len(firsts)
}

// NoteLoad notes each member's write load result (what WriteLoad's stop
// gave, in the members' order) in t, and gives a problem for each member
// no load reached: no request sent, or none succeeded.
func NoteLoad(t *verdict.Trial, members []*Member, results []load.Result) (problems []string) {
	for i, res := range results {
		t.Notef("write load on %s: %s", members[i].Name, res)
		if res.Requests == 0 || res.Success == 0 {
			problems = append(problems, fmt.Sprintf("no write load reached %s (%s)", members[i].Name, res))
		}
	}
	return problems
}

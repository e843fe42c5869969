// Package judge decides a cluster-convergence round from what it
// observed: pure functions of recorded facts, with nothing of Docker's in
// their imports, so that `make unit` tests them alone.
package judge

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/harp-project/harp/harness/core/obs"
	"github.com/harp-project/harp/harness/core/text"
)

// ConvergeTimeout bounds the wait for a written key to be on every node:
// harness/live/cluster's ConvergeTimeout, which this package may not import.
const ConvergeTimeout = 15 * time.Second

// Facts are what one round observed.
type Facts struct {
	Keys         []string                          `json:"keys"`
	Delays       map[string]time.Duration          `json:"delays_ns"`     // keys on every node within the bound: write to seen everywhere
	StillMissing obs.Optional[map[string][]string] `json:"still_missing"` // re-read after the deadlines: node -> keys it lacks
	WrongData    obs.Of[string]                    `json:"wrong_data"`    // entries holding other data once it settled ("" none)
}

// Round: a key missing from a node after its deadline and at the re-read,
// or data other than written once settled, is a violation; a key that
// arrived late but before the re-read is a remark. Unknown readings are
// left to the one rule on observations.
func Round(f Facts) (violation, remark string) {
	still, _ := f.StillMissing.Get()
	missing := text.DistinctKeys(still)
	late := len(f.Keys) - len(f.Delays) - missing
	var parts []string
	if missing > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d keys not on every node %s after their write (%s)", missing, len(f.Keys), ConvergeTimeout, text.MissingCounts(still)))
	}
	if wrong, _ := f.WrongData.Get(); wrong != "" {
		parts = append(parts, wrong)
	}
	if late > 0 && f.StillMissing.State == obs.Seen {
		remark = "keys on every node only after their deadline"
	}
	return strings.Join(parts, "; "), remark
}

// Since turns the times keys were seen everywhere into delays after their
// own writes; a key seen before its write was recorded counts as 0.
func Since(seen, written map[string]time.Time) map[string]time.Duration {
	out := map[string]time.Duration{}
	for k, at := range seen {
		if w, ok := written[k]; ok {
			out[k] = max(at.Sub(w), 0)
		}
	}
	return out
}

// Durations sums up times to converge: median and max.
func Durations(ds map[string]time.Duration) (median, maximum time.Duration) {
	var all []time.Duration
	for _, d := range ds {
		all = append(all, d)
	}
	if len(all) == 0 {
		return 0, 0
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	return all[len(all)/2], all[len(all)-1]
}

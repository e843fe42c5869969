// Package judge decides a cluster-reloads round from what it observed:
// pure functions of recorded facts, with nothing of Docker's in their
// imports, so that `make unit` tests them alone.
package judge

import (
	"fmt"
	"strings"
	"time"

	"github.com/harp-project/harp/harness/core/obs"
	"github.com/harp-project/harp/harness/core/text"
)

// Facts are what a round saw once its reloads were done.
type Facts struct {
	How          string                            `json:"how"`                  // one after another, all at once
	Problems     []string                          `json:"problems,omitempty"`   // reloads that failed, load that never arrived
	MeshAfter    string                            `json:"mesh_after,omitempty"` // unmet: the cluster never meshed again
	StillMissing obs.Optional[map[string][]string] `json:"still_missing"`        // node -> keys written before it lacks
	Keys         int                               `json:"keys"`
	WrongData    obs.Optional[string]              `json:"wrong_data"` // "" none
	// Settled: the wait for the keys ended, some missing, once the
	// cluster showed nothing in flight (cluster.SpreadSettled): how long
	// into it. 0: every key came, or the wait ran out.
	Settled time.Duration `json:"settled_ns,omitempty"`
}

// Round: keys written before the reloads missing on a node once the
// cluster has meshed again, or holding other data, is the violation.
// Unknown readings are left to the one rule on observations.
func Round(f Facts) (violation, unmet string) {
	still, _ := f.StillMissing.Get()
	wrong, _ := f.WrongData.Get()
	switch {
	case len(f.Problems) > 0:
		return "", "reloads " + f.How + ": " + strings.Join(f.Problems, "; ")
	case f.MeshAfter != "":
		return "", "after the reloads: " + f.MeshAfter
	case len(still) > 0:
		v := fmt.Sprintf("after reloading %s, %d of %d keys written before are not on every node (%s)", f.How, text.DistinctKeys(still), f.Keys, text.MissingCounts(still))
		if f.Settled > 0 {
			v += fmt.Sprintf(", with nothing left in flight (every update pushed and acknowledged, %s into the wait)", f.Settled.Round(time.Millisecond))
		}
		return v, ""
	}
	return wrong, ""
}

// UnmetBefore says which keys written before the reloads were not on
// every node when a round began, or could not be read.
func UnmetBefore(miss map[string][]string, err error, n int) string {
	if err != nil {
		return "before the round, the keys written before the reloads could not be read: " + err.Error()
	}
	return fmt.Sprintf("before the round, keys written before the reloads were already missing (%s of %d): a loss now could not be told from an earlier one", text.MissingCounts(miss), n)
}

// Package judge decides a cluster-partition trial from what it observed:
// pure functions of recorded facts, with nothing of Docker's in their
// imports, so that `make unit` tests them alone.
package judge

import (
	"fmt"
	"time"

	"github.com/harp-project/harp/harness/core/obs"
	"github.com/harp-project/harp/harness/core/text"
)

const (
	// PartitionSeen bounds the wait for the doctor to see the links to the
	// cut node down.
	PartitionSeen = 20 * time.Second
	// HealTimeout bounds the wait, after the heal, for every link and then
	// for every key on every node.
	HealTimeout = 30 * time.Second
)

// Facts are what one partition observed.
type Facts struct {
	MeshBefore   string                            `json:"mesh_before,omitempty"` // unmet: the cluster had not meshed before the cut
	SawCut       bool                              `json:"saw_cut"`               // the doctor saw the links to the cut node down
	Leaked       obs.Optional[int]                 `json:"leaked"`                // keys written on the cut side that reached the other side during the cut
	LinksBack    string                            `json:"links_back,omitempty"`  // unmet: the links never came back after the heal (with Docker's view)
	Keys         int                               `json:"keys"`                  // written on both sides
	StillMissing obs.Optional[map[string][]string] `json:"still_missing"`         // after the heal and the re-read: node -> keys it lacks
	Cut          string                            `json:"cut"`                   // the cut node
	// Settled: the wait for the keys ended, some missing, once the
	// cluster showed nothing in flight (cluster.SpreadSettled): how long
	// into it. 0: every key came, or the wait ran out.
	Settled time.Duration `json:"settled_ns,omitempty"`
}

// Partition: keys missing once every link is back is the violation; a cut
// that did not take, or links that did not come back, are the harness's or
// the network's, never HAProxy's. Unknown readings are left to the one rule.
func Partition(f Facts) (violation, unmet string) {
	leaked, _ := f.Leaked.Get()
	still, _ := f.StillMissing.Get()
	switch {
	case f.MeshBefore != "":
		return "", "before the cut: " + f.MeshBefore
	case !f.SawCut:
		return "", fmt.Sprintf("the cut did not take: harp doctor still saw the links to %s up %s after it", f.Cut, PartitionSeen)
	case leaked > 0:
		return "", fmt.Sprintf("the cut did not take: %d keys written on %s during the cut reached the other side", leaked, f.Cut)
	case f.LinksBack != "":
		return "", "after the heal: " + f.LinksBack
	}
	if missing := text.DistinctKeys(still); missing > 0 {
		if f.Settled > 0 {
			return fmt.Sprintf("%d of %d keys not on every node after the heal, with every link up and nothing left in flight (every update pushed and acknowledged, %s into the wait) (%s)", missing, f.Keys, f.Settled.Round(time.Millisecond), text.MissingCounts(still)), ""
		}
		return fmt.Sprintf("%d of %d keys not on every node %s after the heal, with every link up (%s)", missing, f.Keys, HealTimeout, text.MissingCounts(still)), ""
	}
	return "", ""
}

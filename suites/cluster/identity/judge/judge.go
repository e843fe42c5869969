// Package judge decides a cluster-identity trial from what it observed:
// pure functions of recorded facts, with nothing of Docker's in their
// imports, so that `make unit` tests them alone.
package judge

import (
	"fmt"

	"github.com/harp-project/harp/harness/core/obs"
)

// Facts are what one identity trial observed.
type Facts struct {
	How         string                `json:"how"` // how the ghost takes its name: a cluster.Identity (localpeer, -L, hostname)
	Ghost       string                `json:"ghost"`
	Control     string                `json:"control,omitempty"` // unmet: the well-named nodes did not replicate
	Peering     obs.Optional[Peering] `json:"peering"`           // how the ghost runs the section
	KeysOnGhost obs.Optional[int]     `json:"keys_on_ghost"`
	Keys        int                   `json:"keys"`
}

// Peering is how a node runs the section: its local peer's name ("": none,
// or no section), and whether a link is up (it can sync).
type Peering struct {
	Local   string `json:"local,omitempty"`
	CanSync bool   `json:"can_sync"`
}

// Trial: keys on the ghost are the violation. Absence counts only when the
// ghost cannot sync by construction (HAProxy removed its section, or it has
// no local peer and no link): then nothing can arrive later, and no wait
// decides it. Unknown readings are left to the one rule on observations.
func Trial(f Facts) (violation, unmet string) {
	p, _ := f.Peering.Get()
	keys, _ := f.KeysOnGhost.Get()
	switch {
	case f.Control != "":
		return "", f.Control
	case p.Local != "" && p.Local != "ghost": // the setup failed
		return "", fmt.Sprintf("%s runs the section as %s, not ghost: the setup (%s) did not take", f.Ghost, p.Local, f.How)
	case keys > 0:
		return fmt.Sprintf("%d of %d keys reached %s although its local peer name (ghost, by %s) matches no peer line", keys, f.Keys, f.Ghost, f.How), ""
	case p.CanSync:
		return "", fmt.Sprintf("%s runs the peers section with a link up yet received none of the keys: absence cannot be told from delay", f.Ghost)
	}
	return "", ""
}

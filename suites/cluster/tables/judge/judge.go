// Package judge decides a cluster-tables run from what the odd node
// received: pure functions of recorded facts, with nothing of Docker's in
// their imports, so that `make unit` tests them alone.
package judge

import (
	"fmt"

	"github.com/harp-project/harp/harness/core/obs"
)

// Facts are what the odd node received.
type Facts struct {
	Odd     string            `json:"odd"`
	Control string            `json:"control,omitempty"` // unmet: the nodes defined as node1 did not get every table, or node1 never pushed
	Marker  string            `json:"marker,omitempty"`  // unmet: the identical table's keys, written last, never reached the odd node
	Keytype obs.Optional[int] `json:"keytype"`           // keytype keys the odd node holds
	Store   obs.Optional[int] `json:"store"`             // store keys it holds (recorded, not judged)
	Keys    int               `json:"keys"`
}

// Exchange: the odd node applying updates of a table whose key type
// differs is the violation. Its absence counts only once keys written
// after those updates, on the same sessions, have arrived there (the
// marker), and the control nodes got every table. Unknown readings are
// left to the one rule.
func Exchange(f Facts) (violation, unmet string) {
	switch keys, _ := f.Keytype.Get(); {
	case f.Control != "":
		return "", f.Control
	case keys > 0:
		return fmt.Sprintf("%s applied %d of %d updates of cluster/keytype although its key type (ip) differs from the sender's (string)", f.Odd, keys, f.Keys), ""
	case f.Marker != "":
		return "", f.Marker
	}
	return "", ""
}

package chaos

import (
	"fmt"
	"slices"
	"strings"
)

// FaultKinds are the faults a run picks from.
var FaultKinds = []string{"latency", "slicer", "reset", "stall", "partition", "pause-node", "pause-worker", "restart"}

// ParseFaults reads a list of fault kinds ("all" is every kind, given
// back as nil). An empty list is an error: a flag given empty must not
// silently mean every fault.
func ParseFaults(v string) ([]string, error) {
	if strings.TrimSpace(v) == "all" {
		return nil, nil
	}
	if strings.TrimSpace(v) == "" {
		return nil, fmt.Errorf("no fault kind given (leave it out or say all for every kind, or name some of %s)", strings.Join(FaultKinds, ","))
	}
	var out []string
	for _, k := range strings.Split(v, ",") {
		k = strings.TrimSpace(k)
		if k == "" {
			return nil, fmt.Errorf("an empty fault kind in %q", v)
		}
		if !slices.Contains(FaultKinds, k) {
			return nil, fmt.Errorf("unknown fault %q (want all, or some of %s)", k, strings.Join(FaultKinds, ","))
		}
		out = append(out, k)
	}
	return out, nil
}

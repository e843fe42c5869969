package cpus

import (
	"fmt"
	"runtime"
)

// SplitUnmet says why a Split of set (node: the CPUs a node of threads
// threads runs on; load: the others, where harp's load generator and
// backend run) cannot show what (a stall under load: "the livelock"), ""
// when it can: set names CPUs this process may not use, the node has
// fewer CPUs than threads, or none is left for the load generator, whose
// own CPU starvation would otherwise look like the node's stall. Its
// texts name the CPUSET and THREADS parameters that set and threads
// come from.
func SplitUnmet(set string, node, load []int, threads int, what string) string {
	switch {
	case len(Without(node, All())) > 0:
		return fmt.Sprintf("CPUSET=%s names CPUs this machine does not have or harp may not use (it may use %s)", set, Format(All()))
	case len(node) < threads:
		return fmt.Sprintf("%d CPUs < %d threads: this machine cannot show %s; run with THREADS=%d or on a larger machine", len(node), threads, what, len(node))
	case len(load) == 0:
		return fmt.Sprintf("no CPU headroom for the load generator: HAProxy's %d threads take all %d CPUs (run on a machine with more CPUs than THREADS)", threads, runtime.NumCPU())
	}
	return ""
}

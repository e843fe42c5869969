package cpus

import (
	"strings"
	"testing"
)

func TestSplitUnmet(t *testing.T) {
	all := All()
	unmet := func(set string, threads int) string {
		node, load := Split(set, threads)
		return SplitUnmet(set, node, load, threads, "the livelock")
	}
	if u := unmet("500-501", 2); !strings.HasPrefix(u, "CPUSET=500-501 names CPUs this machine does not have") {
		t.Errorf("CPUs the machine lacks: %q", u)
	}
	if u := unmet("", len(all)+1); !strings.Contains(u, "cannot show the livelock; run with THREADS=") {
		t.Errorf("more threads than CPUs: %q", u)
	}
	if u := unmet("", len(all)); !strings.HasPrefix(u, "no CPU headroom for the load generator") {
		t.Errorf("every CPU to the node: %q", u)
	}
	if len(all) > 1 {
		if u := unmet("", 1); u != "" {
			t.Errorf("one thread, %d CPUs: %q", len(all), u)
		}
	}
}

package convergence

import (
	"testing"

	"github.com/harp-project/harp/harness/live/cluster"
	"github.com/harp-project/harp/suites/cluster/convergence/judge"
)

// The bound the judge names is the cluster's.
func TestConvergeTimeout(t *testing.T) {
	if judge.ConvergeTimeout != cluster.ConvergeTimeout {
		t.Errorf("judge.ConvergeTimeout %s, cluster.ConvergeTimeout %s", judge.ConvergeTimeout, cluster.ConvergeTimeout)
	}
}

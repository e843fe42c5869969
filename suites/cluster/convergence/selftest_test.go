//go:build selftest

// selftest: together

package convergence_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/harp-project/harp/harness/core/verdict"
	"github.com/harp-project/harp/harness/ops/report"
	"github.com/harp-project/harp/harness/ops/selftest"
	"github.com/harp-project/harp/suites/cluster/convergence"
)

func TestSelf(t *testing.T) { selftest.Run(t, "convergence on real builds") }

var _ = selftest.Describe(convergence.Suite, func() {
	selftest.Verdicts(convergence.Suite, func(r report.Result) {
		for _, t := range r.Trials {
			Expect(t.Evidence.(*convergence.Evidence).Converged).To(Equal(50))
		}
	},
		// Observed on both: every key on every node within tens of milliseconds.
		selftest.ServedEnds(verdict.Pass)...,
	)
}, Label("slow"))

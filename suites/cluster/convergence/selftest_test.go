//go:build selftest

package convergence_test

import (
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/harp-project/harp/harness/selftest"
	"github.com/harp-project/harp/harness/verdict"
	"github.com/harp-project/harp/suites/cluster/convergence"
)

func TestSelf(t *testing.T) { selftest.Run(t, "convergence on real builds") }

// Observed on both: every key on every node within tens of milliseconds.
var _ = selftest.Describe(convergence.Suite, func() {
	DescribeTable("the oldest and the newest build served here",
		func(ctx SpecContext, build string) {
			r := selftest.Verdict(ctx, convergence.Suite, selftest.Image(ctx, build))
			Expect(r.Verdict).To(Equal(verdict.Pass), r.Line())
			Expect(r.TrialsRun).To(Equal(convergence.Suite.Trials), r.Line())
			for _, t := range r.Trials {
				Expect(t.Evidence.(*convergence.Evidence).Converged).To(Equal(50))
			}
		},
		Entry("Debian bookworm (2.6.12)", "deb:bookworm", SpecTimeout(5*time.Minute)),
		Entry("Debian experimental (3.4.7)", "deb:experimental", SpecTimeout(5*time.Minute)),
	)
}, Label("slow"))

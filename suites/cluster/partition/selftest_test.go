//go:build selftest

package partition_test

import (
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/harp-project/harp/harness/selftest"
	"github.com/harp-project/harp/harness/verdict"
	"github.com/harp-project/harp/suites/cluster/partition"
)

func TestSelf(t *testing.T) { selftest.Run(t, "partition on real builds") }

// Observed on both: the doctor sees the cut node down 2-3 s after the cut; the tables reconverge after the heal.
var _ = selftest.Describe(partition.Suite, func() {
	DescribeTable("the oldest and the newest build served here",
		func(ctx SpecContext, build string) {
			r := selftest.Verdict(ctx, partition.Suite, selftest.Image(ctx, build))
			Expect(r.Verdict).To(Equal(verdict.Pass), r.Line())
			Expect(r.TrialsRun).To(Equal(partition.Suite.Trials), r.Line())
			ev := r.Trials[0].Evidence.(*partition.Evidence)
			Expect(ev.DoctorSawPartition).To(BeTrue())
			Expect(ev.DivergencePct).To(BeNumerically(">", 0))
			Expect(ev.Reconverged).To(BeTrue())
		},
		Entry("Debian bookworm (2.6.12)", "deb:bookworm", SpecTimeout(5*time.Minute)),
		Entry("Debian experimental (3.4.7)", "deb:experimental", SpecTimeout(5*time.Minute)),
	)
}, Label("slow"))

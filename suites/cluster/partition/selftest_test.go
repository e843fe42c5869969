//go:build selftest

// selftest: together

package partition_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/harp-project/harp/harness/core/verdict"
	"github.com/harp-project/harp/harness/ops/report"
	"github.com/harp-project/harp/harness/ops/selftest"
	"github.com/harp-project/harp/suites/cluster/partition"
)

func TestSelf(t *testing.T) { selftest.Run(t, "partition on real builds") }

var _ = selftest.Describe(partition.Suite, func() {
	selftest.Verdicts(partition.Suite, func(r report.Result) {
		ev := r.Trials[0].Evidence.(*partition.Evidence)
		Expect(ev.DoctorSawPartition).To(BeTrue())
		Expect(ev.DivergencePct).To(BeNumerically(">", 0))
		Expect(ev.Reconverged).To(BeTrue())
	},
		// Observed on both: the doctor sees the cut node down 2-3 s after the cut; the tables reconverge after the heal.
		selftest.ServedEnds(verdict.Pass)...,
	)
}, Label("slow"))

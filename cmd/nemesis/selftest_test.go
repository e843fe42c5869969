//go:build selftest

// selftest: together

package main

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/harp-project/harp/harness/core/verdict"
	"github.com/harp-project/harp/harness/ops/selftest"
)

func TestSelf(t *testing.T) { selftest.Run(t, "harp's verdicts under its own faults (bounded sample)") }

// The bounded sample of `make nemesis`: each sample cell under two seeds,
// one cell at a time (the nemesis is process-wide). No verdict is bent,
// and faults were injected (a nemesis that injects nothing proves nothing).
var _ = Describe("the nemesis sample", Label("nemesis"), func() {
	It("bends no verdict", func(ctx SpecContext) {
		cells, err := pick(Cells, "", true)
		Expect(err).NotTo(HaveOccurred())
		var runs []Run
		faults := 0
		for _, c := range cells {
			seeds := []int64{11, 12}
			if c.Suite != "3517" {
				seeds = seeds[:1] // the slower suite: one seed
			}
			for _, seed := range seeds {
				r := runCell(ctx, selftest.Docker, selftest.Builder, selftest.RunID, c, seed)
				GinkgoWriter.Printf("%s on %s, seed %d: %s (%d faults): %s\n", c.Suite, c.Spec, seed, r.Got, r.Faults, r.Reason)
				Expect(r.Setup).To(BeEmpty())
				Expect(r.Bent()).To(BeFalse(), "%s on %s, seed %d: %s (%s)", c.Suite, c.Spec, seed, r.Got, r.Reason)
				Expect(r.Got).NotTo(Equal(verdict.Error), r.Reason)
				faults += r.Faults
				runs = append(runs, r)
			}
		}
		Expect(faults).To(BeNumerically(">", 0))
		AddReportEntry(Histogram(runs, []int64{11, 12}))
	}, SpecTimeout(20*60e9))
})

//go:build selftest

package reloads_test

import (
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/harp-project/harp/harness/selftest"
	"github.com/harp-project/harp/harness/verdict"
	"github.com/harp-project/harp/suites/cluster/reloads"
)

func TestSelf(t *testing.T) { selftest.Run(t, "reloads on real builds") }

// Observed on both: every key survives rolling and simultaneous reloads under write load.
var _ = selftest.Describe(reloads.Suite, func() {
	DescribeTable("the oldest and the newest build served here",
		func(ctx SpecContext, build string) {
			r := selftest.Verdict(ctx, reloads.Suite, selftest.Image(ctx, build))
			Expect(r.Verdict).To(Equal(verdict.Pass), r.Line())
			Expect(r.TrialsRun).To(Equal(reloads.Suite.Trials), r.Line())
			Expect(r.Trials[1].Evidence.(*reloads.Evidence).Reloads).To(Equal("all at once"))
		},
		Entry("Debian bookworm (2.6.12)", "deb:bookworm", SpecTimeout(5*time.Minute)),
		Entry("Debian experimental (3.4.7)", "deb:experimental", SpecTimeout(5*time.Minute)),
	)
}, Label("slow"))

//go:build selftest

package issue3519_test

import (
	"context"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/harp-project/harp/harness/selftest"
	"github.com/harp-project/harp/harness/verdict"
	"github.com/harp-project/harp/suites/issue3519"
)

func TestSelf(t *testing.T) { selftest.Run(t, "#3519 on real builds") }

// Observed: every build served here (2.6.12 to 3.4.7) clears the flag
// unconditionally and kills the replacement 0.5 to 2 s after the first
// socket closes; the controls stay up; harp's fix passes.
var _ = selftest.Describe(issue3519.Suite, func() {
	DescribeTable("the verdict each real build gives",
		func(ctx context.Context, build string, want verdict.Verdict) {
			r := selftest.Verdict(ctx, issue3519.Suite, selftest.Image(ctx, build))
			Expect(r.Verdict).To(Equal(want), r.Line())
			Expect(r.TrialsRun).To(Equal(5), r.Line())
			if want == verdict.Reproduced {
				Expect(r.Reason).To(Equal("replacement closed by HAProxy within 2.5s in 5 of 5 trials"))
			} else {
				Expect(r.TrialsViolated).To(BeZero(), r.Line())
			}
			for _, t := range r.Trials {
				// Every trial ran beside a control that held, with both
				// show peers blocks recorded.
				ev := t.Evidence.(*issue3519.Evidence)
				Expect(ev.Control.Violation).To(BeEmpty())
				Expect(ev.RemoteBefore).NotTo(BeEmpty())
				Expect(ev.RemoteAfter).NotTo(BeEmpty())
			}
		},
		Entry("Debian bookworm (2.6.12)", "deb:bookworm", verdict.Reproduced),
		Entry("Debian trixie (3.0.11)", "deb:trixie", verdict.Reproduced),
		Entry("Debian experimental (3.4.7)", "deb:experimental", verdict.Reproduced),
		Entry("3.0.11 from Debian's source with harp's fix", "src:deb:3.0.11,patch="+selftest.Fix("3519-peers-alive-flag-owner-only.diff"), verdict.Pass),
	)
})

package suites_test

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/harp-project/harp/harness/verdict"
	"github.com/harp-project/harp/suites"
)

var fix3519 = fixPatch("3519-peers-alive-flag-owner-only.diff")

var _ = Describe("#3519 releasing a superseded peers connection clears the replacement alive flag", Label("issue:3519", "area:peers"), func() {
	// Observed: every build served here (2.6.12 to 3.4.7) clears the flag
	// unconditionally and kills the replacement 0.5 to 2 s after the first
	// socket closes; the controls stay up; harp's fix passes.
	DescribeTable("the verdict each real build gives",
		func(ctx context.Context, build string, want verdict.Verdict) {
			r := run(ctx, suites.Issue3519, image(ctx, build))
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
				Expect(t.Evidence).To(HaveKey("control"))
				Expect(t.Evidence["control"]).To(HaveField("Violation", BeEmpty()))
				Expect(t.Evidence).To(HaveKey("remote_before"))
				Expect(t.Evidence).To(HaveKey("remote_after"))
			}
		},
		Entry("Debian bookworm (2.6.12)", "deb:bookworm", verdict.Reproduced),
		Entry("Debian trixie (3.0.11)", "deb:trixie", verdict.Reproduced),
		Entry("Debian experimental (3.4.7)", "deb:experimental", verdict.Reproduced),
		Entry("3.0.11 from Debian's source with harp's fix", "src:deb:3.0.11,patch="+fix3519, verdict.Pass),
	)
})

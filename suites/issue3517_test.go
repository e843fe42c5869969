package suites_test

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/harp-project/harp/harness/verdict"
	"github.com/harp-project/harp/suites"
)

var fix3517 = fixPatch("3517-peers-dont-stop-per-section.diff")

var _ = Describe("#3517 multiple peers sections lose stick tables on reload", Label("issue:3517", "area:peers"), func() {
	// Observed on these builds: 2.6 keeps a per-section latch and passes; the
	// 3.x builds share one static latch and lose first/marker on every reload.
	DescribeTable("the verdict each real build gives",
		func(ctx context.Context, build string, want verdict.Verdict) {
			r := run(ctx, suites.Issue3517, image(ctx, build))
			Expect(r.Verdict).To(Equal(want), r.Line())
			Expect(r.TrialsRun).To(Equal(3), r.Line())
			if want == verdict.Reproduced {
				Expect(r.TrialsViolated).To(Equal(3), r.Line())
				Expect(r.Reason).To(Equal("first/marker lost in 3 of 3 reloads"))
			} else {
				Expect(r.TrialsViolated).To(BeZero(), r.Line())
			}
			// The evidence a report needs is there for every round.
			for _, t := range r.Trials {
				Expect(t.Evidence).To(HaveKey("peers_after"))
				Expect(t.Exchanges).NotTo(BeEmpty())
			}
		},
		Entry("Debian bookworm (2.6.12) keeps both tables", "deb:bookworm", verdict.Pass),
		Entry("Debian trixie (3.0.11) loses first/marker", "deb:trixie", verdict.Reproduced),
		Entry("Debian sid (3.2.26) loses first/marker", "deb:sid", verdict.Reproduced),
		Entry("Debian experimental (3.4.7) loses first/marker", "deb:experimental", verdict.Reproduced),
		Entry("3.0.11 from Debian's source, unpatched, loses first/marker", "src:deb:3.0.11", verdict.Reproduced),
		Entry("3.0.11 from Debian's source with harp's fix keeps both tables", "src:deb:3.0.11,patch="+fix3517, verdict.Pass),
	)

	It("gives the same verdict for the fixed binary packed as a bin: build", func(ctx context.Context) {
		fixed := image(ctx, "src:deb:3.0.11,patch="+fix3517)
		Expect(fixed.HostBinary).To(BeAnExistingFile())
		bin := image(ctx, "bin:"+fixed.HostBinary)
		Expect(bin.Tag).NotTo(Equal(fixed.Tag))
		Expect(bin.Version).To(Equal(fixed.Version))
		r := run(ctx, suites.Issue3517, bin)
		Expect(r.Verdict).To(Equal(verdict.Pass), r.Line())
	})
})

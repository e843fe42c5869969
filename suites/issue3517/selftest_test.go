//go:build selftest

package issue3517_test

import (
	"context"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/harp-project/harp/harness/core/verdict"
	"github.com/harp-project/harp/harness/ops/report"
	"github.com/harp-project/harp/harness/ops/selftest"
	"github.com/harp-project/harp/suites/issue3517"
)

func TestSelf(t *testing.T) { selftest.Run(t, "#3517 on real builds") }

var fix = selftest.Fix("3517-peers-dont-stop-per-section.diff")

// Observed on these builds: 2.6 keeps a per-section latch and passes; the
// 3.x builds share one static latch and lose first/marker on every reload.
var _ = selftest.Describe(issue3517.Suite, func() {
	selftest.VerdictsTogether(issue3517.Suite, func(_ selftest.Build, r report.Result) {
		if r.Verdict == verdict.Reproduced {
			Expect(r.Reason).To(Equal("first/marker lost in 3 of 3 reloads"))
		}
		for _, t := range r.Trials { // the evidence a report needs, every round
			Expect(t.Evidence.(*issue3517.Evidence).PeersAfter).To(HaveLen(2))
			Expect(t.Exchanges).NotTo(BeEmpty())
		}
	},
		selftest.On(selftest.Bookworm, verdict.Pass, "keeps both tables"),
		selftest.On(selftest.Trixie, verdict.Reproduced, "loses first/marker"),
		selftest.On(selftest.Sid, verdict.Reproduced, "loses first/marker"),
		selftest.On(selftest.Experimental, verdict.Reproduced, "loses first/marker"),
		selftest.Build{Spec: "src:deb:3.0.11", Want: verdict.Reproduced, Why: "3.0.11 from Debian's source, unpatched"},
		selftest.Build{Spec: "src:deb:3.0.11,patch=" + fix, Want: verdict.Pass, Why: "3.0.11 with harp's fix keeps both tables"},
	)

	It("gives the same verdict for the fixed binary packed as a bin: build", func(ctx context.Context) {
		fixed := selftest.Image(ctx, "src:deb:3.0.11,patch="+fix)
		bin := selftest.Image(ctx, "bin:"+fixed.HostBinary)
		Expect(bin.Tag).NotTo(Equal(fixed.Tag))
		Expect(bin.Version).To(Equal(fixed.Version))
		r := selftest.Verdict(ctx, issue3517.Suite, bin)
		Expect(r.Verdict).To(Equal(verdict.Pass), r.Line())
	})
})

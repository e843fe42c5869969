//go:build selftest

package issue3519_test

import (
	"testing"

	. "github.com/onsi/gomega"

	"github.com/harp-project/harp/harness/core/verdict"
	"github.com/harp-project/harp/harness/ops/report"
	"github.com/harp-project/harp/harness/ops/selftest"
	"github.com/harp-project/harp/suites/issue3519"
)

func TestSelf(t *testing.T) { selftest.Run(t, "#3519 on real builds") }

// Observed: every build served here (2.6.12 to 3.4.7) clears the flag
// unconditionally and kills the replacement 0.5 to 2 s after the first
// socket closes; the controls stay up; harp's fix passes.
var _ = selftest.Describe(issue3519.Suite, func() {
	selftest.Verdicts(issue3519.Suite, func(r report.Result) {
		if r.Verdict == verdict.Reproduced {
			Expect(r.Reason).To(Equal("replacement killed by HAProxy's reconnect check (no_hbt +1) in 5 of 5 trials"))
		}
		for _, t := range r.Trials { // beside a control that held, both show peers blocks recorded
			ev := t.Evidence.(*issue3519.Evidence)
			Expect(ev.Control.Violation).To(BeEmpty())
			Expect(ev.RemoteBefore).NotTo(BeEmpty())
			Expect(ev.RemoteAfter).NotTo(BeEmpty())
		}
	},
		selftest.On(selftest.Bookworm, verdict.Reproduced, ""),
		selftest.On(selftest.Trixie, verdict.Reproduced, ""),
		selftest.On(selftest.Experimental, verdict.Reproduced, ""),
		selftest.Build{Spec: "src:deb:3.0.11,patch=" + selftest.Fix("3519-peers-alive-flag-owner-only.diff"), Want: verdict.Pass, Why: "3.0.11 with harp's fix"},
	)
})

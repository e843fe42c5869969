//go:build selftest

// selftest: together

package learnedentriesobeyreceiver_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/harp-project/harp/harness/core/verdict"
	"github.com/harp-project/harp/harness/ops/report"
	"github.com/harp-project/harp/harness/ops/selftest"
	"github.com/harp-project/harp/suites/conformance/learnedentriesobeyreceiver"
)

func TestSelf(t *testing.T) { selftest.Run(t, "conf-learned-entries-obey-receiver on real builds") }

var mutant = "src:deb:3.0.11,patch=" + selftest.Mutant("3-no-expire-clamp.diff")

// Observed: 2.6.12 keeps the sender's lifetime for entries learnt by a
// timed update (a resync), beyond its own table's expire; 3.0.11 and later
// clamp it; the mutant removes 3.0.11's clamp and behaves as 2.6.12 does.
var _ = selftest.Describe(learnedentriesobeyreceiver.Suite, func() {
	selftest.VerdictsTogether(learnedentriesobeyreceiver.Suite, func(b selftest.Build, r report.Result) {
		if r.Verdict == verdict.Reproduced {
			Expect(r.TrialsViolated).To(Equal(1), r.Line())
			Expect(r.Reason).To(ContainSubstring("expire, learnt by resync: B's entry"))
		}
	},
		selftest.On(selftest.Bookworm, verdict.Reproduced, "does not clamp a learnt entry's expiry"),
		selftest.On(selftest.Trixie, verdict.Pass, ""),
		selftest.On(selftest.Sid, verdict.Pass, ""),
		selftest.On(selftest.Experimental, verdict.Pass, ""),
		selftest.Build{Spec: mutant, Want: verdict.Reproduced, Why: "the mutant removes the clamp"},
	)
}, Label("slow"))

//go:build selftest

// selftest: together

package updatesbothways_test

import (
	"strings"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/harp-project/harp/harness/core/verdict"
	"github.com/harp-project/harp/harness/ops/report"
	"github.com/harp-project/harp/harness/ops/selftest"
	"github.com/harp-project/harp/suites/conformance/updatesbothways"
)

func TestSelf(t *testing.T) { selftest.Run(t, "conf-updates-both-ways on real builds") }

var mutant = "src:deb:3.0.11,patch=" + selftest.Mutant("2-learned-entry-not-repushed.diff")

// Observed: every Debian build pushes B's update back to A in each kind
// (tens of milliseconds); the mutant never does.
var _ = selftest.Describe(updatesbothways.Suite, func() {
	selftest.VerdictsTogether(updatesbothways.Suite, func(b selftest.Build, r report.Result) {
		if strings.HasPrefix(b.Spec, mutant) {
			Expect(r.TrialsViolated).To(Equal(len(updatesbothways.Kinds)), r.Line())
			return
		}
		for _, t := range r.Trials {
			f := t.Evidence.(*updatesbothways.Evidence).Facts
			Expect(f.OnA.Value).To(Equal("2"), r.Line())
			Expect(f.Latency).To(BeNumerically("<", f.Bound))
		}
	},
		selftest.On(selftest.Bookworm, verdict.Pass, ""),
		selftest.On(selftest.Trixie, verdict.Pass, ""),
		selftest.On(selftest.Sid, verdict.Pass, ""),
		selftest.On(selftest.Experimental, verdict.Pass, ""),
		selftest.Build{Spec: mutant + " | BOUND=2s", Want: verdict.Reproduced, Why: "the mutant never pushes a learnt entry again"},
	)
}, Label("slow"))

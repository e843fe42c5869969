//go:build selftest

// selftest: together

package manytables_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/harp-project/harp/harness/report"
	"github.com/harp-project/harp/harness/selftest"
	"github.com/harp-project/harp/harness/verdict"
	"github.com/harp-project/harp/suites/conformance/manytables"
)

func TestSelf(t *testing.T) { selftest.Run(t, "conf-many-tables on real builds") }

var mutant = "src:deb:3.0.11,patch=" + selftest.Mutant("4-many-tables-8bit-lookup.diff")

// Observed: with 300 tables two 2.6.12 nodes never finish their initial
// resync (200 tables do); 3.x builds learn every entry every way; the
// mutant ignores the definitions of tables past the 255th.
var _ = selftest.Describe(manytables.Suite, func() {
	selftest.VerdictsTogether(manytables.Suite, func(b selftest.Build, r report.Result) {
		switch r.Verdict {
		case verdict.Pass:
			for _, t := range r.Trials {
				Expect(t.Evidence.(*manytables.Evidence).Facts.Took).To(BeNumerically(">", 0))
			}
		case verdict.Reproduced:
			if b.Spec == "deb:bookworm | BOUND=10s" {
				Expect(r.Reason).To(HavePrefix("initial resync: with 300 tables the nodes did not mesh and finish their initial resync"), r.Line())
			} else {
				Expect(r.TrialsViolated).To(Equal(3), r.Line())
				Expect(r.Reason).To(ContainSubstring("100 of 100 entries missing or wrong"), r.Line())
			}
		}
	},
		selftest.Build{Spec: "deb:bookworm | BOUND=10s", Want: verdict.Reproduced, Why: "2.6.12 never finishes its initial resync with 300 tables"},
		selftest.Build{Spec: "deb:trixie", Want: verdict.Pass, Why: "3.0.11"},
		selftest.Build{Spec: "deb:sid", Want: verdict.Pass, Why: "3.2.26"},
		selftest.Build{Spec: "deb:experimental", Want: verdict.Pass, Why: "3.4.7"},
		selftest.Build{Spec: mutant + " | BOUND=10s", Want: verdict.Reproduced, Why: "the mutant drops the definitions of tables past the 255th"},
	)
}, Label("slow"))

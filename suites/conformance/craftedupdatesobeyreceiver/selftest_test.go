//go:build selftest

// selftest: together

package craftedupdatesobeyreceiver_test

import (
	"slices"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/harp-project/harp/harness/core/verdict"
	"github.com/harp-project/harp/harness/ops/report"
	"github.com/harp-project/harp/harness/ops/selftest"
	"github.com/harp-project/harp/suites/conformance/craftedupdatesobeyreceiver"
)

func TestSelf(t *testing.T) { selftest.Run(t, "conf-crafted-updates-obey-receiver on real builds") }

var mutant = "src:deb:3.0.11,patch=" + selftest.Mutant("3-no-expire-clamp.diff")

// Observed: 2.6.12 keeps the lifetime a timed update carries, beyond its
// own table's expire; 3.0.11 and later clamp it; the mutant removes
// 3.0.11's clamp and behaves as 2.6.12 does. 2.6.12 and 3.0.11 also keep
// a new key learnt with a shorter expiry than its table's for the table's
// whole expire (fixed in 3.4-dev9, 8f06c8fda4a6, and in 3.2.26; Debian's
// 3.0.11 lacks it), so the mutant fails both.
var failing = map[string][]string{
	selftest.Bookworm.Spec: {"huge-expiry", "short-expiry-of-a-new-key"},
	selftest.Trixie.Spec:   {"short-expiry-of-a-new-key"},
	mutant:                 {"huge-expiry", "short-expiry-of-a-new-key"},
}

var _ = selftest.Describe(craftedupdatesobeyreceiver.Suite, func() {
	selftest.VerdictsTogether(craftedupdatesobeyreceiver.Suite, func(b selftest.Build, r report.Result) {
		var failed []string
		for _, c := range r.Checks {
			if c.Failed > 0 {
				failed = append(failed, c.ID)
			}
		}
		Expect(failed).To(ConsistOf(failing[b.Spec]), r.Line())
		if slices.Contains(failed, "huge-expiry") {
			Expect(r.Reason).To(ContainSubstring("huge expiry: a timed update with expire 2147483647 ms"))
		}
	},
		selftest.On(selftest.Bookworm, verdict.Reproduced, "does not clamp a learnt entry's expiry, nor purge a new key by its own shorter one"),
		selftest.On(selftest.Trixie, verdict.Reproduced, "keeps a new key learnt with a shorter expiry for its table's"),
		selftest.On(selftest.Sid, verdict.Pass, ""),
		selftest.On(selftest.Experimental, verdict.Pass, ""),
		selftest.Build{Spec: mutant, Want: verdict.Reproduced, Why: "the mutant removes the clamp"},
	)
}, Label("slow"))

//go:build selftest

// selftest: together

package identity_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/harp-project/harp/harness/core/verdict"
	"github.com/harp-project/harp/harness/ops/report"
	"github.com/harp-project/harp/harness/ops/selftest"
	"github.com/harp-project/harp/suites/cluster/identity"
)

func TestSelf(t *testing.T) { selftest.Run(t, "identity on real builds") }

var _ = selftest.Describe(identity.Suite, func() {
	selftest.Verdicts(identity.Suite, func(r report.Result) {
		for i, how := range []string{"localpeer", "-L", "hostname"} {
			ev := r.Trials[i].Evidence.(*identity.Evidence)
			Expect(string(ev.IdentityBy)).To(Equal(how))
			Expect(ev.Facts.KeysOnGhost.Value).To(BeZero())
			Expect(ev.DoctorNamedIdentity).To(BeTrue())
		}
		// Each trial's cluster is stopped only after its crashes were
		// read: every node checked, none left unread.
		Expect(r.CrashWatch).NotTo(BeNil())
		Expect(r.CrashWatch.Failed).To(BeEmpty())
		Expect(r.CrashWatch.Nodes).To(BeNumerically(">=", 12))
	},
		// Observed on both: a misnamed node has its peers section removed, by each of the three ways, and the doctor names it.
		selftest.ServedEnds(verdict.Pass)...,
	)
}, Label("slow"))

//go:build selftest

package identity_test

import (
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/harp-project/harp/harness/selftest"
	"github.com/harp-project/harp/harness/verdict"
	"github.com/harp-project/harp/suites/cluster/identity"
)

func TestSelf(t *testing.T) { selftest.Run(t, "identity on real builds") }

// Observed on both: a misnamed node has its peers section removed, by each of the three ways, and the doctor names it.
var _ = selftest.Describe(identity.Suite, func() {
	DescribeTable("the oldest and the newest build served here",
		func(ctx SpecContext, build string) {
			r := selftest.Verdict(ctx, identity.Suite, selftest.Image(ctx, build))
			Expect(r.Verdict).To(Equal(verdict.Pass), r.Line())
			Expect(r.TrialsRun).To(Equal(identity.Suite.Trials), r.Line())
			for i, how := range []string{"localpeer", "-L", "hostname"} {
				ev := r.Trials[i].Evidence.(*identity.Evidence)
				Expect(string(ev.IdentityBy)).To(Equal(how))
				Expect(ev.KeysOnGhost).To(BeZero())
				Expect(ev.DoctorNamedIdentity).To(BeTrue())
			}
		},
		Entry("Debian bookworm (2.6.12)", "deb:bookworm", SpecTimeout(5*time.Minute)),
		Entry("Debian experimental (3.4.7)", "deb:experimental", SpecTimeout(5*time.Minute)),
	)
}, Label("slow"))

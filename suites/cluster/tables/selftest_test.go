//go:build selftest

package tables_test

import (
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/harp-project/harp/harness/selftest"
	"github.com/harp-project/harp/harness/verdict"
	"github.com/harp-project/harp/suites/cluster/tables"
)

func TestSelf(t *testing.T) { selftest.Run(t, "tables on real builds") }

// Observed on both: another key type is never applied; fewer stored types are exchanged with the common data.
var _ = selftest.Describe(tables.Suite, func() {
	DescribeTable("the oldest and the newest build served here",
		func(ctx SpecContext, build string) {
			r := selftest.Verdict(ctx, tables.Suite, selftest.Image(ctx, build))
			Expect(r.Verdict).To(Equal(verdict.Pass), r.Line())
			Expect(r.TrialsRun).To(Equal(tables.Suite.Trials), r.Line())
			ev := r.Trials[0].Evidence.(*tables.Evidence)
			Expect(ev.KeytypeOnOddNode).To(BeZero())
			Expect(ev.StoreOnOddNode).To(Equal(10)) // same key type: exchanged, extra data dropped
			Expect(ev.DoctorNamedDefinition).To(BeTrue())
		},
		Entry("Debian bookworm (2.6.12)", "deb:bookworm", SpecTimeout(5*time.Minute)),
		Entry("Debian experimental (3.4.7)", "deb:experimental", SpecTimeout(5*time.Minute)),
	)
}, Label("slow"))

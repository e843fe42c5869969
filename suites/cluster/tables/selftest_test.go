//go:build selftest

// selftest: together

package tables_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/harp-project/harp/harness/core/verdict"
	"github.com/harp-project/harp/harness/ops/report"
	"github.com/harp-project/harp/harness/ops/selftest"
	"github.com/harp-project/harp/suites/cluster/tables"
)

func TestSelf(t *testing.T) { selftest.Run(t, "tables on real builds") }

var _ = selftest.Describe(tables.Suite, func() {
	selftest.Verdicts(tables.Suite, func(r report.Result) {
		ev := r.Trials[0].Evidence.(*tables.Evidence)
		Expect(ev.Facts.Keytype.Value).To(BeZero())
		Expect(ev.Facts.Store.Value).To(Equal(10)) // same key type: exchanged, extra data dropped
		Expect(ev.DoctorNamedDefinition).To(BeTrue())
	},
		// Observed on both: another key type is never applied; fewer stored types are exchanged with the common data.
		selftest.ServedEnds(verdict.Pass)...,
	)
}, Label("slow"))

//go:build selftest

// selftest: together

package reloads_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/harp-project/harp/harness/report"
	"github.com/harp-project/harp/harness/selftest"
	"github.com/harp-project/harp/harness/verdict"
	"github.com/harp-project/harp/suites/cluster/reloads"
)

func TestSelf(t *testing.T) { selftest.Run(t, "reloads on real builds") }

var _ = selftest.Describe(reloads.Suite, func() {
	selftest.Verdicts(reloads.Suite, func(r report.Result) {
		Expect(r.Trials[1].Evidence.(*reloads.Evidence).Reloads).To(Equal("all at once"))
	},
		// Observed on both: every key survives rolling and simultaneous reloads under write load.
		selftest.ServedEnds(verdict.Pass)...,
	)
}, Label("slow"))

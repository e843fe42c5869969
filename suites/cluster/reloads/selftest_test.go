//go:build selftest

// selftest: together

package reloads_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/harp-project/harp/harness/core/verdict"
	"github.com/harp-project/harp/harness/ops/report"
	"github.com/harp-project/harp/harness/ops/selftest"
	"github.com/harp-project/harp/suites/cluster/reloads"
)

func TestSelf(t *testing.T) { selftest.Run(t, "reloads on real builds") }

var _ = selftest.Describe(reloads.Suite, func() {
	selftest.Verdicts(reloads.Suite, func(r report.Result) {
		if r.Verdict == verdict.Reproduced {
			// The wait for the lost key ends once nothing is in flight,
			// not at its 15 s bound.
			Expect(r.Reason).To(ContainSubstring("with nothing left in flight"))
			return
		}
		Expect(r.Trials[1].Evidence.(*reloads.Evidence).Reloads).To(Equal("all at once"))
	},
		// Observed on both: every key survives rolling and simultaneous reloads under write load.
		append(selftest.ServedEnds(verdict.Pass),
			selftest.Build{Spec: "src:deb:3.0.11,patch=" + selftest.Mutant("1-reload-teach-skip-first.diff"), Want: verdict.Reproduced,
				Why: "mutant 1: the old worker skips the first entry it teaches on every reload"})...,
	)
}, Label("slow"))

//go:build selftest

package runner_test

import (
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/harp-project/harp/harness/core/suite"
	"github.com/harp-project/harp/harness/core/verdict"
	"github.com/harp-project/harp/harness/ops/runner"
	"github.com/harp-project/harp/harness/ops/selftest"
	"github.com/harp-project/harp/suites/cluster/convergence"
	"github.com/harp-project/harp/suites/issue3517"
	"github.com/harp-project/harp/suites/issue3519"
)

func TestSelf(t *testing.T) { selftest.Run(t, "verdicts on a starved HAProxy") }

// HAProxy's containers get 30% of one CPU: harp's waits grow, HAProxy is
// slow, and a build without the bug must still never be REPRODUCED.
// Observed here: PASS for all three.
var (
	fix3517 = "src:deb:3.0.11,patch=" + selftest.Fix("3517-peers-dont-stop-per-section.diff")
	fix3519 = "src:deb:3.0.11,patch=" + selftest.Fix("3519-peers-alive-flag-owner-only.diff")
)

var _ = Describe("verdicts on a starved HAProxy", Label("starved", "slow"), Ordered, func() {
	// The builds first, untimed by the specs: on a fresh machine they compile.
	BeforeAll(func(ctx SpecContext) {
		for _, b := range []string{fix3517, fix3519, "deb:experimental"} {
			selftest.Image(ctx, b)
		}
	}, NodeTimeout(30*time.Minute))

	DescribeTable("a build without the bug is never REPRODUCED when HAProxy is starved of CPU",
		func(ctx SpecContext, s *suite.Suite, build string) {
			r := (&runner.Runner{Docker: selftest.Docker, Builder: selftest.Builder, RunID: selftest.RunID, CPUs: 0.3}).RunOne(ctx, s, selftest.Image(ctx, build))
			AddReportEntry(r.Line())
			Expect(r.Verdict).To(BeElementOf(verdict.Pass, verdict.Inconclusive), r.Line())
		},
		Entry("#3517 with harp's fix", issue3517.Suite, fix3517, NodeTimeout(5*time.Minute)),
		Entry("#3519 with harp's fix", issue3519.Suite, fix3519, NodeTimeout(5*time.Minute)),
		Entry("cluster-convergence on 3.4.7", convergence.Suite, "deb:experimental", NodeTimeout(5*time.Minute)),
	)
})

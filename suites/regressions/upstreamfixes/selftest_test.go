//go:build selftest

// selftest: together

package upstreamfixes_test

import (
	"os"
	"strings"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/harp-project/harp/harness/report"
	"github.com/harp-project/harp/harness/selftest"
	"github.com/harp-project/harp/harness/verdict"
	"github.com/harp-project/harp/suites/regressions/upstreamfixes"
)

func TestSelf(t *testing.T) { selftest.Run(t, "upstream-fixes on real builds") }

// Observed: 2.6.12 (Debian bookworm) lacks these fixes, and its worker
// dies on a connection whose src_inc_gpc tracks nothing; 3.4.7 has them
// all. The release tags themselves (v2.6.0..v3.4.0) are in
// docs/upstream-bugs.md, run from a clone CI does not have.
var _ = selftest.Describe(upstreamfixes.Suite, func() {
	selftest.VerdictsTogether(upstreamfixes.Suite, func(b selftest.Build, r report.Result) {
		failed := map[string]bool{}
		for _, c := range r.Checks {
			if c.Failed > 0 {
				failed[c.ID] = true
			}
		}
		if b.Spec == selftest.Bookworm.Spec {
			for _, id := range []string{"cfg-tcp-connection-sc-set-gpt", "cli-empty-line-ignored", "cli-env-without-sockpairs",
				"cli-set-table-invalid-ip-refused", "cli-too-big-command-reported", "cli-too-many-args-refused", "connect-src-inc-gpc-untracked",
				"cli-error-ends-with-empty-line", "listener-shards-distinct-ids", "listener-shards-close-ids-distinct", "frontend-full-then-rate-limited-resumes"} {
				Expect(failed).To(HaveKey(id), r.Line())
			}
			Expect(r.Crashes).To(HaveLen(1))
			if pat, _ := os.ReadFile("/proc/sys/kernel/core_pattern"); strings.TrimSpace(string(pat)) == "core" {
				Expect(r.Crashes[0].Signature).To(ContainSubstring("smp_create_src_stkctr"))
			}
			return
		}
		Expect(failed).To(BeEmpty(), r.Line())
		Expect(r.Crashes).To(BeEmpty())
	},
		selftest.On(selftest.Bookworm, verdict.Reproduced, "predates eleven of the fixes and crashes on one"),
		selftest.On(selftest.Experimental, verdict.Pass, "has every fix"),
	)
}, Label("slow"))

//go:build selftest

// selftest: together

package failedreload_test

import (
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/harp-project/harp/harness/core/verdict"
	"github.com/harp-project/harp/harness/ops/report"
	"github.com/harp-project/harp/harness/ops/selftest"
	"github.com/harp-project/harp/suites/conformance/failedreload"
)

func TestSelf(t *testing.T) { selftest.Run(t, "conf-failed-reload on real builds") }

var mutant = "src:deb:3.0.11,patch=" + selftest.Mutant("5-failed-reload-blocks-sigusr2.diff")

// Observed: every Debian build keeps its worker, its table and its
// signals through each failed reload and takes the next one; 3.2.26 and
// 3.4.7 do not count a reload whose config the master itself cannot parse
// (the unmatched quote, also after a peers section) in show proc's failed
// counter; 2.6.12 and 3.0.11 survive a syntax error after a peers section
// (upstream 035058e8bfe4, which v2.6.0 and v2.7.0 lack); 3.4.7's master
// dies with SIGSEGV there after a first failure and recovery; the mutant blocks SIGUSR2 after
// a failure, so the next SIGUSR2 never takes.
var _ = selftest.Describe(failedreload.Suite, func() {
	selftest.VerdictsTogether(failedreload.Suite, func(b selftest.Build, r report.Result) {
		if strings.HasPrefix(b.Spec, "deb:sid") || strings.HasPrefix(b.Spec, "deb:experimental") {
			// The syntax errors (the plain one and the one after a peers
			// section) are what these masters fail to count.
			Expect(r.Reason).To(ContainSubstring("a syntax error, recovery by SIGUSR2: "), r.Line())
			Expect(r.Reason).NotTo(ContainSubstring("a missing map file, recovery"), r.Line())
			if strings.Contains(r.Reason, "the master exited on") || strings.Contains(r.Reason, "the master exited with code 139") {
				Expect(r.Crashes).NotTo(BeEmpty(), "a master that died on a signal has crash evidence")
			}
			// The uncounted failures are decided by the master's line, not
			// waited out: well under the 20 s bound.
			final := 0
			for _, t := range r.Trials {
				ev := t.Evidence.(*failedreload.Evidence)
				if p, ok := ev.Facts.Procs.Get(); ok && !p.Counted {
					Expect(p.Final).To(BeTrue(), "trial %d: an uncounted failure read after the master's line", t.N)
					Expect(p.At).To(BeNumerically("<", 5*time.Second), "trial %d", t.N)
					final++
				}
			}
			if strings.HasPrefix(b.Spec, "deb:sid") { // 3.4.7's master dies at the first one
				Expect(final).To(BeNumerically(">", 0), "some uncounted failure was read")
			}
			return
		}
		for _, t := range r.Trials {
			ev := t.Evidence.(*failedreload.Evidence)
			if strings.HasPrefix(b.Spec, mutant) && t.N == 1 {
				Expect(ev.Facts.Signals.Value.Blocked).To(BeTrue(), "the master's /proc status shows SIGUSR2 blocked")
				Expect(ev.Facts.Recovered).To(BeFalse())
			}
			if r.Verdict == verdict.Pass {
				Expect(ev.Facts.Procs.Value.Failed).To(Equal(ev.Facts.FailedBefore + 1))
				Expect(ev.Status.SigCgt).NotTo(BeZero(), "the master's status was read")
			}
		}
	},
		// Every build keeps the suite's 20 s BOUND: a correct master is
		// never waited out, and an uncounted failure is final at the
		// master's line (a starved harp must not read as a failure).
		selftest.Build{Spec: "deb:bookworm", Want: verdict.Pass, Why: "2.6.12"},
		selftest.Build{Spec: "deb:trixie", Want: verdict.Pass, Why: "3.0.11"},
		selftest.Build{Spec: "deb:sid", Want: verdict.Reproduced, Why: "3.2.26 does not count a master-side parse failure"},
		selftest.Build{Spec: "deb:experimental", Want: verdict.Reproduced, Why: "3.4.7 does not count a master-side parse failure"},
		selftest.Build{Spec: mutant + " | BOUND=3s", Want: verdict.Reproduced, Why: "the mutant blocks SIGUSR2 after a failed reload"},
	)
}, Label("slow"))

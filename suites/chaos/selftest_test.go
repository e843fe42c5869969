//go:build selftest

// selftest: together

package chaos_test

import (
	"strings"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/harp-project/harp/harness/core/verdict"
	"github.com/harp-project/harp/harness/ops/report"
	"github.com/harp-project/harp/harness/ops/selftest"
	"github.com/harp-project/harp/suites/chaos"
)

func TestSelf(t *testing.T) { selftest.Run(t, "chaos histories on real builds") }

// A 25 s history with a fixed seed on 3.4.7 keeps the model; on mutant 1
// (the old worker skips the first entry it teaches on every reload) the
// reloads lose keys the checker names.
var _ = selftest.Describe(chaos.Suite, func() {
	selftest.VerdictsTogether(chaos.Suite, func(b selftest.Build, r report.Result) {
		ev := r.Trials[0].Evidence.(*chaos.Evidence)
		Expect(ev.History.Ops).NotTo(BeEmpty())
		Expect(ev.Result.Writes).To(BeNumerically(">", 50))
		Expect(ev.History.Schedule).NotTo(BeEmpty())
		if b.Want == verdict.Reproduced {
			var reloads []string
			for _, v := range ev.Result.Violations {
				if strings.Contains(v.What, "before its reload") {
					reloads = append(reloads, v.Key)
				}
			}
			Expect(reloads).NotTo(BeEmpty(), "%v", ev.Result.Violations)
		}
	},
		selftest.Build{Spec: "deb:experimental | DURATION=25s SEED=5", Want: verdict.Pass, Why: "3.4.7 under every fault"},
		selftest.Build{Spec: "src:deb:3.0.11,patch=" + selftest.Mutant("1-reload-teach-skip-first.diff") + " | DURATION=25s SEED=5 FAULTS=latency,slicer",
			Want: verdict.Reproduced, Why: "mutant 1 loses a taught entry on every reload"},
	)
}, Label("slow"))

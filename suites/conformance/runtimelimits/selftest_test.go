//go:build selftest

package runtimelimits_test

import (
	"os"
	"strings"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/harp-project/harp/harness/core/verdict"
	"github.com/harp-project/harp/harness/ops/report"
	"github.com/harp-project/harp/harness/ops/selftest"
	"github.com/harp-project/harp/suites/conformance/runtimelimits"
)

func TestSelf(t *testing.T) { selftest.Run(t, "conf-runtime-limits on real builds") }

var hang = "src:deb:3.0.11,patch=" + selftest.Mutant("7-runtime-limits-hang-enable-frontend.diff")

// dequeue: mutant 7b spins on its proxy lock in `set maxconn frontend`
// once a listener waits in the proxy's queue, i.e. only under traffic.
var dequeue = "src:deb:3.0.11,patch=" + selftest.Mutant("7b-runtime-limits-hang-maxconn-dequeue.diff")

// Observed: 2.6.12's worker deadlocks in `set maxconn frontend` under load
// (dequeue_proxy_listeners -> resume_listener, killed by the watchdog);
// 3.0.11 and later take the limits down and up under load
// (CLI answers in milliseconds, traffic back at once); the mutant spins
// on its own proxy lock in `enable frontend`: the CLI never answers, the
// watchdog kills the worker, and the crash evidence holds the backtrace.
var _ = selftest.Describe(runtimelimits.Suite, func() {
	selftest.VerdictsTogether(runtimelimits.Suite, func(b selftest.Build, r report.Result) {
		if b.Spec == selftest.Bookworm.Spec || b.Spec == dequeue {
			// The raise after connections queued at 0 deadlocks (upstream #2726).
			Expect(r.Reason).To(MatchRegexp(`^frontend maxconn 0 and back: "set maxconn frontend web 200" (did not answer within \d+s|was not answered: the connection closed)`))
			Expect(r.Crashes).To(HaveLen(1))
			Expect(r.Crashes[0].Code).To(Equal(134))
			return
		}
		if b.Spec != hang {
			Expect(r.Crashes).To(BeEmpty())
			return
		}
		// The watchdog's kill may come before the 3 s bound (a fast
		// machine): the connection then closes without an answer.
		Expect(r.Reason).To(MatchRegexp(`disable and enable the frontend: "enable frontend web" (did not answer within \d+s|was not answered: the connection closed)`))
		Expect(r.Reason).To(MatchRegexp(`the watchdog killed the worker \(Thread \d is about to kill the process\)`))
		Expect(r.Crashes).To(HaveLen(1))
		c := r.Crashes[0]
		Expect(c.Code).To(Equal(134))
		Expect(c.Signal).To(Equal("Aborted"))
		Expect(c.LastLog).To(ContainSubstring("exited with code 134"))
		if pat, _ := os.ReadFile("/proc/sys/kernel/core_pattern"); strings.TrimSpace(string(pat)) == "core" {
			// Every thread's stack, the stuck one inside the lock it holds.
			Expect(c.Backtrace).To(ContainSubstring("Thread 2 ("))
			Expect(c.Backtrace).To(ContainSubstring("Thread 1 ("))
			Expect(c.Backtrace).To(ContainSubstring("resume_listener"))
		} else {
			Expect(c.Note).To(ContainSubstring("core_pattern"))
		}
	},
		selftest.On(selftest.Bookworm, verdict.Reproduced, "deadlocks in set maxconn frontend under load"),
		selftest.On(selftest.Trixie, verdict.Pass, ""),
		selftest.On(selftest.Sid, verdict.Pass, ""),
		selftest.On(selftest.Experimental, verdict.Pass, ""),
		selftest.Build{Spec: hang, Want: verdict.Reproduced, Why: "the mutant hangs in enable frontend until the watchdog kills it"},
		selftest.Build{Spec: dequeue, Want: verdict.Reproduced, Why: "mutant 7b hangs in set maxconn frontend once connections queued"},
	)
}, Label("slow"))

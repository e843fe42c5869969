//go:build selftest

package listenerlivelock_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/harp-project/harp/harness/core/verdict"
	"github.com/harp-project/harp/harness/ops/selftest"
	"github.com/harp-project/harp/suites/listenerlivelock"
	"github.com/harp-project/harp/suites/listenerlivelock/judge"
)

func TestSelf(t *testing.T) { selftest.Run(t, "listener livelock on real builds") }

// What these runs give depends on the machine: each expectation is written
// for any number of CPUs, so it holds on 2 CPUs and on 16.
var _ = selftest.Describe(listenerlivelock.Suite, func() {
	It("is INCONCLUSIVE, saying why, when the machine has fewer CPUs than threads", func(ctx context.Context) {
		threads := runtime.NumCPU() + 14
		r := selftest.Verdict(ctx, listenerlivelock.Suite, selftest.Image(ctx, "deb:experimental"), fmt.Sprint("THREADS=", threads))
		Expect(r.Verdict).To(Equal(verdict.Inconclusive), r.Line())
		Expect(r.Reason).To(ContainSubstring(fmt.Sprintf("%d CPUs < %d threads", runtime.NumCPU(), threads)))
	})

	// Two thread groups, a short load: where the machine has a CPU to spare
	// for the load, the limit must be reached (beside a control that never
	// reaches it) and the run classified; where it has not, INCONCLUSIVE
	// before any load.
	It("classifies a short run with two thread groups, or says why the machine cannot", func(ctx context.Context) {
		r := selftest.Verdict(ctx, listenerlivelock.Suite, selftest.Image(ctx, "deb:experimental"),
			"THREADS=2", "MAXCONN=100", "RATE=300", "DURATION=4s", "TIMEOUT=5s", "LAYOUT=groups")
		if runtime.NumCPU() < 3 {
			Expect(r.Verdict).To(Equal(verdict.Inconclusive), r.Line())
			Expect(r.Reason).To(ContainSubstring("no CPU headroom for the load generator"))
			return
		}
		Expect(r.Verdict).To(BeElementOf(verdict.Pass, verdict.Reproduced), r.Line())
		f := r.Trials[0].Evidence.(*judge.Facts)
		Expect(f.Attack.Peaks.FrontendLimit).To(BeEquivalentTo(100))
		Expect(f.Attack.Peaks.Frontend).To(BeEquivalentTo(100), "the frontend reached its maxconn")
		Expect(f.Control.Peaks.Frontend).To(BeNumerically("<", f.Control.Peaks.FrontendLimit), "the control never reached its limit")
	})

	// A layout without thread groups cannot show the bug: never a PASS,
	// whatever the machine (here with harp's fixed 3.0.11 source build).
	It("is INCONCLUSIVE for a layout without several thread groups", func(ctx context.Context) {
		r := selftest.Verdict(ctx, listenerlivelock.Suite, selftest.Image(ctx, "src:deb:3.0.11,patch="+selftest.Fix("listener-livelock-dequeue-with-room.diff")),
			"THREADS=2", "MAXCONN=100", "RATE=300", "DURATION=4s", "TIMEOUT=5s", "LAYOUT=binds")
		Expect(r.Verdict).To(Equal(verdict.Inconclusive), r.Line())
	})
})

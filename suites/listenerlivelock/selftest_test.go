//go:build selftest

package listenerlivelock_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/harp-project/harp/harness/selftest"
	"github.com/harp-project/harp/harness/verdict"
	"github.com/harp-project/harp/suites/listenerlivelock"
)

func TestSelf(t *testing.T) { selftest.Run(t, "listener livelock on real builds") }

var _ = selftest.Describe(listenerlivelock.Suite, func() {
	It("is INCONCLUSIVE, saying why, when the machine has fewer CPUs than threads", func(ctx context.Context) {
		threads := runtime.NumCPU() + 14
		r := selftest.Verdict(ctx, listenerlivelock.Suite, selftest.Image(ctx, "deb:experimental"), fmt.Sprint("THREADS=", threads))
		Expect(r.Verdict).To(Equal(verdict.Inconclusive), r.Line())
		Expect(r.Reason).To(ContainSubstring(fmt.Sprintf("%d CPUs < %d threads", runtime.NumCPU(), threads)))
	})

	// One short real run that fits this machine: the limit must be reached
	// and the run classified with its reason, never a verdict without one.
	// harp's fixed source build runs like any other build.
	DescribeTable("a short run reaches the frontend's limit and is classified", func(ctx context.Context, build, layout string, want verdict.Verdict, reason string) {
		r := selftest.Verdict(ctx, listenerlivelock.Suite, selftest.Image(ctx, build), fmt.Sprint("THREADS=", min(runtime.NumCPU(), 2)),
			"MAXCONN=100", "RATE=300", "DURATION=4s", "TIMEOUT=5s", "LAYOUT="+layout)
		Expect(r.Verdict).To(Equal(want), r.Line())
		Expect(r.Reason).To(ContainSubstring(reason))
		Expect(r.Trials).To(HaveLen(1), r.Line())
		f := r.Trials[0].Evidence.(*listenerlivelock.Facts)
		Expect(f.Peaks.FrontendLimit).To(BeEquivalentTo(100))
		Expect(f.Peaks.Frontend).To(BeEquivalentTo(100), "the frontend reached its maxconn")
		Expect(f.Load.Requests).To(BeNumerically(">", 0))
	},
		// 2 threads on 2 cores: the limit is reached, no stall (observed).
		Entry("Debian experimental (3.4.7), one listener per thread group", "deb:experimental", "groups",
			verdict.Pass, "limit reached, 0 stalls over 100 ms"),
		// 3.0 has no stall warning: without it a PASS would be unfounded.
		Entry("3.0.11 with harp's fix, one bind per thread", "src:deb:3.0.11,patch="+selftest.Fix("listener-livelock-dequeue-with-room.diff"), "binds",
			verdict.Inconclusive, "emits no stall warnings"),
	)
})

package suites_test

import (
	"context"
	"fmt"
	"os"
	"runtime"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/harp-project/harp/harness/verdict"
	"github.com/harp-project/harp/suites"
)

var _ = Describe("listener livelock at maxconn", Label("issue:listener-livelock", "area:listeners"), func() {
	setenv := func(kv map[string]string) {
		for k, v := range kv {
			DeferCleanup(os.Setenv, k, os.Getenv(k))
			os.Setenv(k, v)
		}
	}

	It("is INCONCLUSIVE, saying why, when the machine has fewer CPUs than threads", func(ctx context.Context) {
		setenv(map[string]string{"HARP_LIVELOCK_THREADS": fmt.Sprint(runtime.NumCPU() + 14)})
		r := run(ctx, suites.ListenerLivelock, image(ctx, "deb:experimental"))
		Expect(r.Verdict).To(Equal(verdict.Inconclusive), r.Line())
		Expect(r.Reason).To(ContainSubstring(fmt.Sprintf("%d CPUs < %d threads", runtime.NumCPU(), runtime.NumCPU()+14)))
	})

	// One short real run that fits this machine: the limit must be reached
	// and the run classified with its reason. On 2 cores, expect PASS with
	// no stall, or INCONCLUSIVE with the reason: never a verdict without one.
	// harp's fixed source build runs like any other build.
	DescribeTable("a short run reaches the frontend's limit and is classified", func(ctx context.Context, build, layout string, want verdict.Verdict, reason string) {
		setenv(map[string]string{"HARP_LIVELOCK_THREADS": fmt.Sprint(min(runtime.NumCPU(), 2)), "HARP_LIVELOCK_MAXCONN": "100",
			"HARP_LIVELOCK_RATE": "300", "HARP_LIVELOCK_DURATION": "4s", "HARP_LIVELOCK_TIMEOUT": "5s", "HARP_LIVELOCK_LAYOUT": layout})
		r := run(ctx, suites.ListenerLivelock, image(ctx, build))
		Expect(r.Verdict).To(Equal(want), r.Line())
		Expect(r.Reason).To(ContainSubstring(reason))
		Expect(r.Trials).To(HaveLen(1), r.Line())
		t := r.Trials[0]
		Expect(t.Evidence["frontend_limit"]).To(BeEquivalentTo(100))
		Expect(t.Evidence["frontend_peak"]).To(BeEquivalentTo(100), "the frontend reached its maxconn")
		Expect(t.Evidence).To(HaveKey("load"))
	},
		// 2 threads on 2 cores: the limit is reached, no stall (observed).
		Entry("Debian experimental (3.4.7), one listener per thread group", "deb:experimental", "groups",
			verdict.Pass, "limit reached, 0 stalls over 100 ms"),
		// 3.0 has no stall warning: without it a PASS would be unfounded.
		Entry("3.0.11 with harp's fix, one bind per thread", "src:deb:3.0.11,patch="+fixPatch("listener-livelock-dequeue-with-room.diff"), "binds",
			verdict.Inconclusive, "emits no stall warnings"),
	)
})

var _ = Describe("listener livelock parameters", Label("issue:listener-livelock", "unit"), func() {
	It("knows which versions warn about stalls", func() {
		Expect(suites.WarnsOnStalls("3.4.7-1")).To(BeTrue())
		Expect(suites.WarnsOnStalls("3.1.0")).To(BeTrue())
		Expect(suites.WarnsOnStalls("3.0.11-9e587df")).To(BeFalse())
		Expect(suites.WarnsOnStalls("2.6.12-1+deb12u3")).To(BeFalse())
	})
	It("counts the CPUs of a cpuset", func() {
		Expect(suites.CPUsFor("0-3,6")).To(Equal(5))
		Expect(suites.CPUsFor("")).To(Equal(runtime.NumCPU()))
	})
	DescribeTable("renders each layout and variant",
		func(env map[string]string, want ...string) {
			for k, v := range env {
				DeferCleanup(os.Setenv, k, os.Getenv(k))
				os.Setenv(k, v)
			}
			cfg, err := suites.LivelockConfig()
			Expect(err).NotTo(HaveOccurred())
			for _, w := range want {
				Expect(cfg).To(ContainSubstring(w))
			}
		},
		Entry("one listener per group", map[string]string{"HARP_LIVELOCK_THREADS": "4", "HARP_LIVELOCK_LAYOUT": "groups"},
			"nbthread 4", "thread-groups 4", "bind :8080 thread 4/all", "maxconn 4000", "server backend backend:8080 maxconn 1"),
		Entry("shards by thread", map[string]string{"HARP_LIVELOCK_THREADS": "4", "HARP_LIVELOCK_LAYOUT": "shards"}, "bind :8080 shards by-thread"),
		Entry("one bind per thread", map[string]string{"HARP_LIVELOCK_THREADS": "3", "HARP_LIVELOCK_LAYOUT": "binds"}, "bind :8080 thread 3\n"),
		Entry("process limit below the frontend's", map[string]string{"HARP_LIVELOCK_VARIANT": "process", "HARP_LIVELOCK_LAYOUT": "binds"},
			"    maxconn 2000\n", "    maxconn 4000\n"),
	)
})

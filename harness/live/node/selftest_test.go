//go:build selftest

package node_test

import (
	"context"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/harp-project/harp/harness/core/config"
	"github.com/harp-project/harp/harness/live/node"
	"github.com/harp-project/harp/harness/ops/selftest"
)

func TestSelf(t *testing.T) { selftest.Run(t, "node triggers on real builds") }

// The triggers suites compose, on the oldest build and a source build:
// typed reads and writes, both ways to reload, a restart, and a worker
// killed by its pid.
var _ = DescribeTable("node triggers", Label("area:toolkit"),
	func(ctx context.Context, build string) {
		cfg, err := config.RenderText("t", `{{template "global" .}}
peers p
    peer harp 127.0.0.1:10001
    table t type ip size 10 store gpc0
`, map[string]any{"Threads": 1, "LocalPeer": "harp"})
		Expect(err).NotTo(HaveOccurred())
		n, err := node.Start(ctx, selftest.Docker, node.Options{Image: selftest.Image(ctx, build), Config: cfg, RunID: selftest.RunID, Name: "triggers"})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { n.Stop(context.Background()) })

		Expect(n.SetEntry(ctx, node.Current, "p/t", "192.0.2.1", "data.gpc0 3")).To(Succeed())
		err = n.SetEntry(ctx, node.Current, "p/nosuch", "192.0.2.1", "data.gpc0 3")
		Expect(node.IsRefused(err)).To(BeTrue(), "%v", err)
		tb, err := n.Table(ctx, node.StatsSocket, "p/t")
		Expect(err).NotTo(HaveOccurred())
		e, ok := tb.Lookup("192.0.2.1")
		Expect(ok).To(BeTrue())
		Expect(e.Data).To(HaveKeyWithValue("gpc0", "3"))

		for _, how := range []node.How{node.BySignal, node.ByMasterCLI} {
			r, err := n.ReloadBy(ctx, how, 20*time.Second)
			Expect(err).NotTo(HaveOccurred(), string(how))
			Expect(r.NewPID).NotTo(Equal(r.OldPID), string(how))
			Expect(r.OldExited).To(BeTrue(), string(how))
		}
		// A restart keeps nothing held in memory: the entry is gone.
		Expect(n.Restart(ctx, 30*time.Second)).To(Succeed())
		tb, err = n.Table(ctx, node.Current, "p/t")
		Expect(err).NotTo(HaveOccurred())
		_, ok = tb.Lookup("192.0.2.1")
		Expect(ok).To(BeFalse(), "an entry survived a restart")

		pid, err := n.CurrentWorker(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(n.KillWorker(ctx, pid, syscall.SIGKILL)).To(Succeed())
		Eventually(func() ([]int, error) {
			exits, err := n.Exits(ctx)
			var codes []int
			for _, x := range exits {
				if x.PID == pid {
					codes = append(codes, x.Code)
				}
			}
			return codes, err
		}).WithTimeout(10 * time.Second).Should(ContainElement(137))
	},
	Entry("Debian bookworm (2.6.12)", "deb:bookworm"),
	Entry("3.0.11 from source (an image without a shell)", "src:deb:3.0.11"),
)

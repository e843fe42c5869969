//go:build selftest

package main_test

import (
	"context"
	"encoding/json"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	"github.com/onsi/gomega/gexec"

	"github.com/harp-project/harp/harness/live/cluster"
	"github.com/harp-project/harp/harness/live/node"
	"github.com/harp-project/harp/harness/ops/clusterdoctor"
	"github.com/harp-project/harp/harness/ops/doctor"
	"github.com/harp-project/harp/harness/ops/selftest"
)

// harp doctor against live instances' runtime sockets, as an operator runs it.
var _ = Describe("harp doctor", Label("area:peers-cluster", "doctor"), func() {
	It("says a healthy cluster is healthy, names a socket below admin level, and fails plainly on an unreachable one", func(ctx SpecContext) {
		c, err := cluster.Start(ctx, selftest.Docker, cluster.Options{Image: selftest.Image(ctx, "deb:experimental"), RunID: selftest.RunID})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { c.Stop(context.Background()) })
		Expect(c.WaitSockets(ctx, 15*time.Second)).To(Succeed())
		Expect(c.WaitMesh(ctx, 30*time.Second)).To(BeEmpty())
		var args []string
		for _, m := range c.Members {
			addr, err := m.Node.Addr(ctx, node.StatsPort)
			Expect(err).NotTo(HaveOccurred())
			args = append(args, "--socket", addr, "--name", m.Name)
		}
		s := selftest.Harp(nil, append([]string{"doctor"}, args...)...)
		Eventually(s).WithTimeout(time.Minute).Should(gexec.Exit(0))
		Expect(s.Out.Contents()).To(ContainSubstring("cluster: node1 -> node2"))
		Expect(s.Out.Contents()).To(ContainSubstring("every peers link is established and every table agrees"))

		// node3 through its user-level socket, as JSON for monitoring.
		user, err := c.Members[2].Node.Addr(ctx, cluster.UserSocket)
		Expect(err).NotTo(HaveOccurred())
		s = selftest.Harp(nil, append(append([]string{"doctor", "--json"}, args[:8]...), "--socket", user, "--name", "node3")...)
		Eventually(s).WithTimeout(time.Minute).Should(gexec.Exit(1))
		var d struct {
			Healthy  bool   `json:"healthy"`
			Cause    string `json:"likely_cause"`
			Findings []struct {
				Code string `json:"code"`
			} `json:"findings"`
		}
		Expect(json.Unmarshal(s.Out.Contents(), &d)).To(Succeed())
		Expect(d.Healthy).To(BeFalse())
		Expect(d.Cause).To(HavePrefix("node3: the socket refused"))
		Expect(d.Findings).To(ContainElement(HaveField("Code", "socket-level")))

		// A link down is read again before it is a problem: one read says
		// link-down; a doctor still reading when the cut heals says the
		// cluster is healthy and that the link was down for a while.
		Expect(c.Cut(ctx, c.Members[2])).To(Succeed())
		Eventually(func() bool { d, err := clusterdoctor.Diagnose(ctx, c); return err == nil && d.Has(doctor.LinkDown) }).WithTimeout(30 * time.Second).Should(BeTrue())
		s = selftest.Harp(nil, append([]string{"doctor", "--settle", "0"}, args...)...)
		Eventually(s).WithTimeout(time.Minute).Should(gexec.Exit(1))
		Expect(s.Out.Contents()).To(ContainSubstring("PROBLEM [link-down]"))
		s = selftest.Harp(nil, append([]string{"doctor", "--settle", "60s"}, args...)...)
		Eventually(s.Err).WithTimeout(time.Minute).Should(gbytes.Say(`read 1: .*node3.*; reading again for up to`))
		Expect(c.Heal(ctx, c.Members[2])).To(Succeed())
		Eventually(s).WithTimeout(90 * time.Second).Should(gexec.Exit(0))
		Expect(s.Out.Contents()).To(MatchRegexp(`read \d+ times over`))
		Expect(s.Out.Contents()).To(ContainSubstring("WARNING [settled] cleared within"))
		Expect(s.Out.Contents()).To(ContainSubstring("every peers link is established and every table agrees"))

		s = selftest.Harp(nil, "doctor", "--socket", "127.0.0.1:1")
		Eventually(s).WithTimeout(time.Minute).Should(gexec.Exit(3))
		Expect(s.Err.Contents()).To(ContainSubstring("127.0.0.1:1: cannot reach the runtime socket"))
		s = selftest.Harp(nil, "doctor")
		Eventually(s).WithTimeout(time.Minute).Should(gexec.Exit(3))
		Expect(s.Err.Contents()).To(ContainSubstring("give at least one --socket"))
	})
})

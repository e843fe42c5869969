package suites_test

import (
	"context"
	"encoding/json"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"

	"github.com/harp-project/harp/harness/cluster"
	"github.com/harp-project/harp/harness/node"
	"github.com/harp-project/harp/harness/scenario"
	"github.com/harp-project/harp/harness/verdict"
	"github.com/harp-project/harp/suites"
)

// The peers-cluster suites on the oldest and the newest build served
// here. Observed on both: every expectation holds, and harp's doctor names
// each situation made on purpose (partition, identity by each of the three
// ways, mismatched table definition).
var _ = Describe("peers clusters", Label("area:peers-cluster", "slow"), func() {
	DescribeTable("every cluster suite holds, and the doctor names what was done on purpose",
		func(ctx SpecContext, build string) {
			img := image(ctx, build)
			results := map[string]verdict.Trial{}
			for _, s := range []*scenario.Scenario{suites.ClusterConvergence, suites.ClusterPartition, suites.ClusterIdentity, suites.ClusterTables, suites.ClusterReloads} {
				r := run(ctx, s, img)
				Expect(r.Verdict).To(Equal(verdict.Pass), r.Line())
				Expect(r.TrialsRun).To(Equal(s.Trials), r.Line())
				for _, t := range r.Trials {
					results[s.ID+"/"+string(rune('0'+t.N))] = t
				}
			}
			Expect(results["cluster-convergence/1"].Evidence).To(HaveKeyWithValue("converged", 50))
			Expect(results["cluster-partition/1"].Evidence).To(HaveKeyWithValue("doctor_saw_partition", true))
			Expect(results["cluster-partition/1"].Evidence).To(HaveKeyWithValue("divergence_pct", BeNumerically(">", 0)))
			Expect(results["cluster-partition/1"].Evidence).To(HaveKey("reconverge_ms"))
			for i, how := range []string{"localpeer", "-L", "hostname"} {
				t := results["cluster-identity/"+string(rune('1'+i))]
				Expect(t.Evidence).To(HaveKeyWithValue("identity_by", how))
				Expect(t.Evidence).To(HaveKeyWithValue("keys_on_ghost", 0))
				Expect(t.Evidence).To(HaveKeyWithValue("doctor_named_identity", true))
			}
			tables := results["cluster-tables/1"].Evidence
			Expect(tables).To(HaveKeyWithValue("keytype_on_odd_node", 0))
			Expect(tables).To(HaveKeyWithValue("store_on_odd_node", 10)) // same key type: exchanged, extra data dropped
			Expect(tables).To(HaveKeyWithValue("doctor_named_definition", true))
		},
		Entry("Debian bookworm (2.6.12)", "deb:bookworm", SpecTimeout(10*time.Minute)),
		Entry("Debian experimental (3.4.7)", "deb:experimental", SpecTimeout(10*time.Minute)),
	)
})

// harp doctor against live instances' runtime sockets, as an operator runs it.
var _ = Describe("harp doctor", Label("area:peers-cluster", "doctor"), func() {
	It("says a healthy cluster is healthy, names a socket below admin level, and fails plainly on an unreachable one", func(ctx SpecContext) {
		c, err := cluster.Start(ctx, docker, cluster.Options{Image: image(ctx, "deb:experimental"), RunID: runID})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { c.Stop(context.Background()) })
		Expect(suites.WaitMesh(ctx, c, 30*time.Second)).To(BeEmpty())
		var args []string
		for _, m := range c.Members {
			addr, err := m.Node.Addr(ctx, node.StatsPort)
			Expect(err).NotTo(HaveOccurred())
			args = append(args, "--socket", addr, "--name", m.Name)
		}
		s := harp(nil, append([]string{"doctor"}, args...)...)
		Eventually(s).WithTimeout(time.Minute).Should(gexec.Exit(0))
		Expect(s.Out.Contents()).To(ContainSubstring("cluster: node1 -> node2"))
		Expect(s.Out.Contents()).To(ContainSubstring("every peers link is established and every table agrees"))

		// node3 through its user-level socket, as JSON for monitoring.
		user, err := c.Members[2].Node.Addr(ctx, cluster.UserSocket)
		Expect(err).NotTo(HaveOccurred())
		s = harp(nil, append(append([]string{"doctor", "--json"}, args[:8]...), "--socket", user, "--name", "node3")...)
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

		s = harp(nil, "doctor", "--socket", "127.0.0.1:1")
		Eventually(s).WithTimeout(time.Minute).Should(gexec.Exit(3))
		Expect(s.Err.Contents()).To(ContainSubstring("127.0.0.1:1: cannot reach the runtime socket"))
		s = harp(nil, "doctor")
		Eventually(s).WithTimeout(time.Minute).Should(gexec.Exit(3))
		Expect(s.Err.Contents()).To(ContainSubstring("give at least one --socket"))
	})
})

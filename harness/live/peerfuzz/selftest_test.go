//go:build selftest

// selftest: together

package peerfuzz_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"

	"github.com/harp-project/harp/harness/live/peerfuzz"
	"github.com/harp-project/harp/harness/ops/selftest"
)

func TestSelf(t *testing.T) { selftest.Run(t, "peer port fuzzing on real builds") }

// harp fuzz peers on a real build and on a mutant that spins on a short
// ack: the mutant's finding is found, minimized and replayed, and does not
// reproduce on the build the mutant came from.
var _ = Describe("harp fuzz peers", Label("area:peers", "fuzz"), func() {
	mutant := "src:deb:3.0.11,patch=" + selftest.Mutant("10-fuzz-spin-on-short-ack.diff")

	It("fuzzes 3.4.7 for 30 s with a fixed seed and finds nothing", func(ctx SpecContext) {
		reports := GinkgoT().TempDir()
		s := selftest.Harp(nil, "fuzz", "peers", "--haproxy", "deb:experimental", "--duration", "30s", "--seed", "11", "--reports", reports)
		Eventually(s).WithTimeout(10 * time.Minute).Should(gexec.Exit(0))
		Expect(s.Out.Contents()).To(MatchRegexp(`fuzz on 3\.4\.7-1: nothing found in [1-9]\d* inputs`))
	}, SpecTimeout(12*time.Minute))

	It("finds the mutant's spin, minimizes it to a short ack, and replays it", func(ctx SpecContext) {
		reports := GinkgoT().TempDir()
		s := selftest.Harp(nil, "fuzz", "peers", "--haproxy", mutant, "--duration", "3m", "--seed", "7", "--minimize-tries", "25", "--reports", reports)
		Eventually(s).WithTimeout(15 * time.Minute).Should(gexec.Exit(1))
		out := string(s.Out.Contents())
		Expect(out).To(MatchRegexp(`FOUND after \d+ inputs: (crash|watchdog|cli): `))
		min, err := filepath.Glob(filepath.Join(reports, "fuzz-*", "finding-min.json"))
		Expect(err).NotTo(HaveOccurred())
		Expect(min).To(HaveLen(1), out)
		in, err := peerfuzz.Load(min[0])
		Expect(err).NotTo(HaveOccurred())
		// What remains is the cut ack, at most behind what it needs.
		Expect(in.Steps[len(in.Steps)-1].What).To(HavePrefix("ack cut to"), in.String())
		Expect(len(in.Steps)).To(BeNumerically("<=", 3), in.String())
		md, err := os.ReadFile(filepath.Join(filepath.Dir(min[0]), "finding.md"))
		Expect(err).NotTo(HaveOccurred())
		Expect(string(md)).To(ContainSubstring("replayed on a restarted node: true"))
		Expect(string(md)).To(ContainSubstring("HAProxy version 3.0.11"))

		s = selftest.Harp(nil, "fuzz", "replay", min[0], "--haproxy", mutant)
		Eventually(s).WithTimeout(10 * time.Minute).Should(gexec.Exit(1))
		Expect(string(s.Out.Contents())).To(ContainSubstring(": REPRODUCED ("))
		s = selftest.Harp(nil, "fuzz", "replay", min[0], "--haproxy", "deb:trixie")
		Eventually(s).WithTimeout(10 * time.Minute).Should(gexec.Exit(0))
		Expect(strings.TrimSpace(string(s.Out.Contents()))).To(HaveSuffix("nothing seen (the finding does not reproduce on this build)"))
	}, SpecTimeout(30*time.Minute))
})

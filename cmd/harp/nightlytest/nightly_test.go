//go:build selftest

// selftest: together

// Package nightlytest runs harp nightly end to end on a git head that
// regresses between two nights. A package of its own, so that make
// selftest runs it beside cmd/harp's other end-to-end specs.
package nightlytest_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"

	"github.com/harp-project/harp/harness/ops/report"
	"github.com/harp-project/harp/harness/ops/selftest"
)

// harp nightly on a git head that regresses between two nights: a local
// repository of HAProxy 3.0.11 whose branch gets a mutant commit (learnt
// entries are never pushed back to their peer) and an ordinary commit on
// top before the second night. The second night's change names the mutant
// commit, found by bisecting between the two nights' commits.
func TestNightly(t *testing.T) { selftest.Run(t, "harp nightly on git heads") }

var _ = Describe("harp nightly on a git head", Label("nightly", "suite:conf-updates-both-ways", "slow"), func() {
	It("bisects a head that regressed since the previous night to the commit that did it", func(ctx SpecContext) {
		repo, sh := selftest.Repo(ctx, "3.0.11")
		sh("git", "add", "-A")
		sh("git", "commit", "-q", "-m", "import haproxy 3.0.11")
		sh("git", "branch", "-M", "night")
		reports := GinkgoT().TempDir()
		night := func() report.Run {
			GinkgoHelper()
			s := selftest.Harp(nil, "nightly", "--debian=false", "--haproxy", "git:"+repo+"@night", "--suites", "suite:conf-updates-both-ways",
				"--trials", "1", "--jobs", "1", "--reports", reports, "--bisect-budget", "15m")
			Eventually(s).WithTimeout(20 * time.Minute).Should(gexec.Exit())
			latest, err := os.Readlink(filepath.Join(reports, "latest"))
			Expect(err).NotTo(HaveOccurred())
			run, err := report.LoadSummary(filepath.Join(reports, latest))
			Expect(err).NotTo(HaveOccurred())
			return run
		}
		first := night()
		Expect(first.Results).NotTo(BeEmpty())
		Expect(first.Results[0].Verdict).To(BeEquivalentTo("PASS"), first.Results[0].Line())
		base := sh("git", "rev-parse", "HEAD")
		Expect(first.Results[0].Commit).To(Equal(base))

		sh("patch", "-p1", "--batch", "-i", selftest.Mutant("2-learned-entry-not-repushed.diff"))
		sh("git", "commit", "-q", "-am", "BUG/MEDIUM: peers: learnt entries are never pushed back (harp's mutant)")
		mutant := sh("git", "rev-parse", "HEAD")
		f, err := os.OpenFile(filepath.Join(repo, "doc", "peers.txt"), os.O_APPEND|os.O_WRONLY, 0)
		Expect(err).NotTo(HaveOccurred())
		_, err = f.WriteString("\nharp: an ordinary documentation change.\n")
		Expect(err).NotTo(HaveOccurred())
		Expect(f.Close()).To(Succeed())
		sh("git", "commit", "-q", "-am", "DOC: an ordinary change")
		head := sh("git", "rev-parse", "HEAD")

		second := night()
		Expect(second.Results[0].Verdict).To(BeEquivalentTo("REPRODUCED"), second.Results[0].Line())
		Expect(second.Results[0].Commit).To(Equal(head))
		Expect(second.Changes).To(HaveLen(1))
		c := second.Changes[0]
		Expect(c.Kind).To(Equal("regressed"))
		Expect(c.BeforeCommit).To(Equal(base))
		Expect(c.AfterCommit).To(Equal(head))
		Expect(c.FirstBad).To(HavePrefix("first bad commit " + mutant[:12] + " BUG/MEDIUM: peers: learnt entries are never pushed back"))
		md, err := os.ReadFile(filepath.Join(reports, second.ID, "report.md"))
		Expect(err).NotTo(HaveOccurred())
		Expect(string(md)).To(ContainSubstring("first bad commit " + mutant[:12]))
	}, SpecTimeout(45*time.Minute))
})

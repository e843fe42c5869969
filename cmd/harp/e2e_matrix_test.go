//go:build selftest

package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"

	"github.com/harp-project/harp/harness/ops/selftest"
)

// harp matrix over two builds, cut in two shards, merged back into one
// report: every cell exactly once, with JUnit XML beside it.
var _ = Describe("harp matrix, shards and merge", Label("matrix"), func() {
	It("runs each shard's cells and merges them into one matrix", func() {
		reports := GinkgoT().TempDir()
		var dirs []string
		for _, shard := range []string{"1/2", "2/2"} {
			// The livelock suite answers at once on any machine with a
			// layout that cannot show the bug (no thread groups).
			s := selftest.Harp(nil, "matrix", "--haproxy", "deb:bookworm deb:experimental", "--suites", "suite:listener-livelock",
				"--param", "LAYOUT=binds", "--shard", shard, "--jobs", "2", "--reports", reports)
			Eventually(s).WithTimeout(5 * time.Minute).Should(gexec.Exit(2)) // INCONCLUSIVE
			Expect(s.Out.Contents()).To(ContainSubstring("INCONCLUSIVE: "))
			latest, err := os.Readlink(filepath.Join(reports, "latest"))
			Expect(err).NotTo(HaveOccurred())
			dirs = append(dirs, filepath.Join(reports, latest))
			var sum struct{ Results []map[string]any }
			data, err := os.ReadFile(filepath.Join(reports, latest, "summary.json"))
			Expect(err).NotTo(HaveOccurred())
			Expect(json.Unmarshal(data, &sum)).To(Succeed())
			Expect(sum.Results).To(HaveLen(1), "one cell per shard")
			Expect(filepath.Join(reports, latest, "junit.xml")).To(BeAnExistingFile())
		}
		s := selftest.Harp(nil, append([]string{"merge", "--reports", reports}, dirs...)...)
		Eventually(s).WithTimeout(time.Minute).Should(gexec.Exit(2))
		Expect(s.Out.Contents()).To(ContainSubstring("2.6.12-1+deb12u4"))
		Expect(s.Out.Contents()).To(ContainSubstring("3.4.7-1"))

		// Shard 2/2 of another matrix has the same counts: it merged into a
		// complete-looking matrix of neither (#29).
		other := GinkgoT().TempDir()
		o := selftest.Harp(nil, "matrix", "--haproxy", "deb:bookworm deb:sid", "--suites", "suite:listener-livelock",
			"--param", "LAYOUT=binds", "--shard", "2/2", "--reports", other)
		Eventually(o).WithTimeout(5 * time.Minute).Should(gexec.Exit(2))
		latest, err := os.Readlink(filepath.Join(other, "latest"))
		Expect(err).NotTo(HaveOccurred())
		m := selftest.Harp(nil, "merge", "--reports", GinkgoT().TempDir(), dirs[0], filepath.Join(other, latest))
		Eventually(m).WithTimeout(time.Minute).Should(gexec.Exit(3))
		Expect(m.Err.Contents()).To(ContainSubstring("of another matrix than run"))
		Expect(m.Err.Contents()).To(ContainSubstring("builds deb:bookworm deb:sid, not deb:bookworm deb:experimental"))
	})
})

var _ = Describe("harp nightly", Label("matrix"), func() {
	It("finds the served builds itself, compares with the previous nightly and keeps the newest run's evidence", func() {
		reports := GinkgoT().TempDir()
		for i := 0; i < 2; i++ {
			s := selftest.Harp(nil, "nightly", "--suites", "suite:listener-livelock", "--param", "LAYOUT=binds", "--jobs", "2", "--reports", reports, "--keep", "1")
			Eventually(s).WithTimeout(10 * time.Minute).Should(gexec.Exit(2))
			// What the four Debian releases install, found at run time.
			for _, v := range []string{"2.6.12-1+deb12u4", "3.0.11-1+deb13u5", "3.2.26-1", "3.4.7-1"} {
				Expect(s.Out.Contents()).To(ContainSubstring(v))
			}
			if i == 1 {
				Expect(s.Out.Contents()).To(MatchRegexp(`changes since \S+: 0`))
			}
		}
		// --keep 1: the first night keeps its summary and reports, not its
		// evidence, and says so; the second keeps everything.
		runs, _ := filepath.Glob(filepath.Join(reports, "2*", "summary.json"))
		Expect(runs).To(HaveLen(2))
		old, now := filepath.Dir(runs[0]), filepath.Dir(runs[1])
		Expect(filepath.Join(old, "EVIDENCE-PRUNED")).To(BeAnExistingFile())
		Expect(filepath.Join(now, "EVIDENCE-PRUNED")).NotTo(BeAnExistingFile())
		for _, f := range []string{"report.md", "report.html", "junit.xml"} {
			Expect(filepath.Join(old, f)).To(BeAnExistingFile())
		}
		evOld, _ := filepath.Glob(filepath.Join(old, "*", "trials.json"))
		evNow, _ := filepath.Glob(filepath.Join(now, "*", "trials.json"))
		Expect(evOld).To(BeEmpty())
		Expect(evNow).NotTo(BeEmpty())
	})
})

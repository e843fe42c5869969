//go:build selftest

package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"

	"github.com/harp-project/harp/harness/ops/regtest"
	"github.com/harp-project/harp/harness/ops/selftest"
)

// The exported reg-tests, run by Debian's varnishtest in each build's
// image: the bug's tests FAIL on 2.6.12, every test passes or skips on
// 3.4.7, each as the manifest's validations (beside harp's verdicts) say.
var _ = Describe("harp reg-tests", Label("reg-tests"), func() {
	regtests := filepath.Join(selftest.Root(), "reg-tests")

	It("runs every exported test on 2.6.12 and 3.4.7, each result the one the manifest expects", func() {
		s := selftest.Harp([]string{"HARP_VTEST="}, "reg-tests", "run", "--dir", regtests, "--haproxy", "deb:bookworm deb:experimental")
		Eventually(s).WithTimeout(10 * time.Minute).Should(gexec.Exit(0))
		out := string(s.Out.Contents())
		Expect(out).To(MatchRegexp(`== deb:bookworm \(HAProxy 2\.6\.12[^)]*\), runner varnishtest \(varnish 7`))
		Expect(out).To(ContainSubstring(`FAILED   cli/cli_empty_line_ignored.vtc: CLI expect failed !~ "Unknown command" (as expected)`))
		Expect(out).To(ContainSubstring(`FAILED   startup/cfg_len_needs_digits.vtc: Bad exit status`))
		files, _ := filepath.Glob(filepath.Join(regtests, "*", "*.vtc"))
		Expect(strings.Count(out, "(as expected)")).To(Equal(2*len(files)), out)
		// On 3.4.7 every upstream fix is in: the only failure is the open
		// finding conf-failed-reload's test shows (the master's SIGSEGV).
		_, latest, _ := strings.Cut(out, "== deb:experimental")
		Expect(strings.Count(latest, "FAILED")).To(Equal(1), latest)
		Expect(latest).To(ContainSubstring("FAILED   mcli/mcli_failed_reload_syntax_error.vtc: a process died"))
	})

	It("never reads a test the runner refused, or a result the manifest does not expect, as a pass", func() {
		dir := GinkgoT().TempDir()
		Expect(exec.Command("cp", "-r", regtests+"/.", dir).Run()).To(Succeed())
		// One test is enough here (the first spec runs them all): the
		// manifest narrowed to it.
		m, err := regtest.Load(filepath.Join(dir, "harp-manifest.json"))
		Expect(err).NotTo(HaveOccurred())
		one := *m.Entry("cli/cli_empty_line_ignored.vtc")
		m.Tests = []regtest.Entry{one}
		Expect(m.Save(filepath.Join(dir, "harp-manifest.json"))).To(Succeed())
		// A test the runner refuses (an argument it does not know) is
		// harp's ERROR, not HAProxy's answer.
		vtc := filepath.Join(dir, "cli", "cli_empty_line_ignored.vtc")
		body, err := os.ReadFile(vtc)
		Expect(err).NotTo(HaveOccurred())
		Expect(os.WriteFile(vtc, []byte(strings.Replace(string(body), "haproxy h1 -W -S -conf {", "haproxy h1 -frobnicate -conf {", 1)), 0o644)).To(Succeed())
		s := selftest.Harp([]string{"HARP_VTEST="}, "reg-tests", "run", "--dir", dir, "--haproxy", "deb:bookworm")
		Eventually(s).WithTimeout(5 * time.Minute).Should(gexec.Exit(1))
		Expect(string(s.Out.Contents())).To(ContainSubstring("ERROR    cli/cli_empty_line_ignored.vtc: not HAProxy's answer: Unknown haproxy argument: -frobnicate"))

		// Bad input: nothing to run, a validation without harp's verdicts.
		s = selftest.Harp(nil, "reg-tests", "run", "--dir", GinkgoT().TempDir(), "--haproxy", "deb:bookworm")
		Eventually(s).WithTimeout(time.Minute).Should(gexec.Exit(3))
		Expect(string(s.Err.Contents())).To(ContainSubstring("lists no test (run `harp reg-tests export` first)"))
		s = selftest.Harp(nil, "reg-tests", "run", "--dir", dir, "--record")
		Eventually(s).WithTimeout(time.Minute).Should(gexec.Exit(3))
		Expect(string(s.Err.Contents())).To(ContainSubstring("--record needs --compare"))
	})
})

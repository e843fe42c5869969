//go:build selftest

// selftest: together

package repro_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"

	"github.com/harp-project/harp/harness/ops/findings"
	"github.com/harp-project/harp/harness/ops/selftest"
)

func TestSelf(t *testing.T) { selftest.Run(t, "standalone reproducers on real builds") }

// harp runs a suite on a build that shows a finding and on one that does
// not, writes the finding's reproducer, and checks it in both builds'
// images: the script must say REPRODUCED on the first and PASS on the
// second, as harp did. Kept short: two failed-reload cycles (the master
// of 3.4.7 dies on the second, after a first failure and recovery).
var _ = Describe("harp findings repro", Label("repro", "suite:conf-failed-reload", "suite:conf-crafted-updates-obey-receiver"), func() {
	repro := func(reports, sig string) (string, string) {
		GinkgoHelper()
		s := selftest.Harp(nil, "findings", "--reports", reports, "--json")
		Eventually(s).WithTimeout(time.Minute).Should(gexec.Exit(0))
		var fs []findings.Finding
		Expect(json.Unmarshal(s.Out.Contents(), &fs)).To(Succeed())
		f, err := findings.Find(fs, sig)
		Expect(err).NotTo(HaveOccurred(), string(s.Out.Contents()))
		out := filepath.Join(GinkgoT().TempDir(), f.ID)
		s = selftest.Harp(nil, "findings", "repro", f.ID, "--reports", reports, "--out", out)
		Eventually(s).WithTimeout(10*time.Minute).Should(gexec.Exit(0), "the reproducer must agree with harp on both builds")
		readme, err := os.ReadFile(filepath.Join(out, "README.md"))
		Expect(err).NotTo(HaveOccurred())
		verified, err := os.ReadFile(filepath.Join(out, "verified.txt"))
		Expect(err).NotTo(HaveOccurred())
		Expect(string(readme)).To(ContainSubstring("**Verified** by harp"))
		return string(verified), out
	}

	It("reproduces the 3.4.7 master's crash after a failed reload, and passes on 3.0.11", func(ctx SpecContext) {
		reports := GinkgoT().TempDir()
		s := selftest.Harp(nil, "run", "--suites", "suite:conf-failed-reload", "--haproxy", "deb:experimental deb:trixie",
			"--trials", "2", "--param", "BREAKS=missing-map,syntax-error", "--param", "BOUND=5s", "--reports", reports)
		Eventually(s).WithTimeout(5 * time.Minute).Should(gexec.Exit(1))
		verified, out := repro(reports, "conf-failed-reload/master-survives.syntax-error")
		Expect(verified).To(MatchRegexp(`(?s)== 3\.4\.7-1 \(deb:experimental\): harp says REPRODUCED.*REPRODUCED: the master died after the failed reload: exit status 139 \(signal 11, SIGSEGV\).*-> exit 1 .*: agrees with harp`))
		Expect(verified).To(MatchRegexp(`(?s)== 3\.0\.11-\S+ \(deb:trixie\): harp says PASS.*PASS: master-survives held in 1 cycle\(s\) with syntax-error.*-> exit 0 .*: agrees with harp`))
		script, err := os.ReadFile(filepath.Join(out, "reproduce"))
		Expect(err).NotTo(HaveOccurred())
		Expect(regexp.MustCompile(`(?m)^#!/bin/sh$`).Match(script)).To(BeTrue())
	}, SpecTimeout(15*time.Minute))

	It("reproduces 2.6.12's unclamped expiry of a crafted peers update with Python, and passes on 3.0.11", func(ctx SpecContext) {
		reports := GinkgoT().TempDir()
		s := selftest.Harp(nil, "matrix", "--suites", "suite:conf-crafted-updates-obey-receiver", "--haproxy", "deb:bookworm deb:trixie", "--jobs", "2", "--reports", reports)
		Eventually(s).WithTimeout(10 * time.Minute).Should(gexec.Exit(1))
		verified, out := repro(reports, "conf-crafted-updates-obey-receiver/huge-expiry")
		Expect(verified).To(MatchRegexp(`(?s)== 2\.6\.12-\S+ \(deb:bookworm\): harp says REPRODUCED.*REPRODUCED: a timed update with expire 2147483647 ms made ce-repro expire in \d+ ms, beyond the table's 10000 ms.*-> exit 1 `))
		Expect(verified).To(MatchRegexp(`(?s)== 3\.0\.11-\S+ \(deb:trixie\): harp says PASS.*PASS: a timed update with expire 2147483647 ms made ce-repro expire in \d+ ms, within the table's 10000 ms.*-> exit 0 `))
		script, err := os.ReadFile(filepath.Join(out, "reproduce"))
		Expect(err).NotTo(HaveOccurred())
		Expect(string(script)).To(HavePrefix("#!/usr/bin/env python3\n"))
	}, SpecTimeout(20*time.Minute))
})

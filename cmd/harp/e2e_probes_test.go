//go:build selftest

package main_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"

	"github.com/harp-project/harp/harness/selftest"
)

// Bad input and faults, as a new user meets them: each fails fast with its
// exit status and a message naming the problem, and no false green.
var _ = Describe("harp under bad input and faults", Label("errors"), func() {
	// A directory harp cannot write to; root writes anywhere but in /proc.
	readOnly := func() string {
		if os.Geteuid() == 0 {
			return "/proc/harp-reports"
		}
		d := GinkgoT().TempDir()
		Expect(os.Chmod(d, 0o500)).To(Succeed())
		DeferCleanup(os.Chmod, d, os.FileMode(0o700))
		return filepath.Join(d, "reports")
	}
	DescribeTable("each probe",
		func(env []string, args func() []string, code int, want string) {
			s := selftest.Harp(env, args()...)
			Eventually(s).WithTimeout(2 * time.Minute).Should(gexec.Exit(code))
			out := string(s.Out.Contents()) + string(s.Err.Contents())
			Expect(out).To(ContainSubstring(want))
			Expect(out).NotTo(ContainSubstring("<nil>"))
			Expect(out).NotTo(ContainSubstring("\x1b["))
		},
		Entry("harp help", nil, func() []string { return []string{"help"} }, 0, "harp run"),
		Entry("harp --help", nil, func() []string { return []string{"--help"} }, 0, "harp run"),
		Entry("harp run -h", nil, func() []string { return []string{"run", "-h"} }, 0, "-label-filter"),
		Entry("harp version", nil, func() []string { return []string{"version"} }, 0, "commit"),
		Entry("harp capture with no arguments", nil, func() []string { return []string{"capture"} }, 3, "usage: harp capture"),
		Entry("--trials 0", nil, func() []string { return []string{"run", "--label-filter", "issue:3517", "--trials", "0"} }, 3, "want 1 to 1000"),
		Entry("--trials -1", nil, func() []string { return []string{"run", "--label-filter", "issue:3517", "--trials", "-1"} }, 3, "want 1 to 1000"),
		Entry("--trials 100000", nil, func() []string { return []string{"run", "--label-filter", "issue:3517", "--trials", "100000"} }, 3, "want 1 to 1000"),
		Entry("--shard 1/2x", nil, func() []string { return []string{"matrix", "--shard", "1/2x"} }, 3, `shard "1/2x"`),
		Entry("a shard that selects no cell", nil, func() []string {
			return []string{"matrix", "--builds", "deb:bookworm", "--suites", "issue:3517", "--shard", "2/2"}
		}, 3, "selects none"),
		Entry("src:/", nil, func() []string { return []string{"run", "--label-filter", "issue:3517", "--haproxy", "src:/"} }, 3, "not an HAProxy source tree"),
		Entry("src:~", nil, func() []string { return []string{"run", "--label-filter", "issue:3517", "--haproxy", "src:~"} }, 3, "no such file"),
		Entry("a missing patch, before any download", nil, func() []string {
			return []string{"run", "--label-filter", "issue:3517", "--haproxy", "src:deb:3.0.11,patch=/nonexistent/fix.diff"}
		}, 3, "patch file /nonexistent/fix.diff"),
		Entry("a parameter no suite takes", nil, func() []string { return []string{"run", "--label-filter", "issue:3517", "--param", "NODES=5"} }, 3, "parameter NODES: no selected suite takes it (they take PARALLEL, SECTIONS)"),
		Entry("a parameter out of range", nil, func() []string {
			return []string{"run", "--label-filter", "issue:cluster-partition", "--param", "NODES=12"}
		}, 3, "want a whole number from 3 to 9"),
		Entry("merge of the same shard twice", nil, func() []string {
			d := GinkgoT().TempDir()
			Expect(os.MkdirAll(filepath.Join(d, "run1"), 0o755)).To(Succeed())
			Expect(os.WriteFile(filepath.Join(d, "run1", "summary.json"), []byte(`{"run_id":"run1","results":[]}`), 0o644)).To(Succeed())
			Expect(os.Symlink("run1", filepath.Join(d, "latest"))).To(Succeed())
			return []string{"merge", "--reports", d, filepath.Join(d, "run1"), filepath.Join(d, "latest")}
		}, 3, "same run directory"),
		Entry("reports that cannot be written", nil, func() []string {
			return []string{"run", "--label-filter", "issue:3517", "--haproxy", "deb:bookworm", "--reports", readOnly()}
		}, 3, "--reports"),
		Entry("a merge into reports that cannot be written", nil, func() []string {
			return []string{"merge", "--reports", readOnly(), GinkgoT().TempDir()}
		}, 3, "--reports"),
		Entry("reports under a file", nil, func() []string {
			f := filepath.Join(GinkgoT().TempDir(), "file")
			Expect(os.WriteFile(f, nil, 0o644)).To(Succeed())
			return []string{"run", "--label-filter", "issue:3517", "--haproxy", "deb:bookworm", "--reports", filepath.Join(f, "reports")}
		}, 3, "--reports"),
		Entry("a doctor socket that is an HTTP server's", nil, func() []string {
			return []string{"doctor", "--socket", httpServer()}
		}, 3, "not an HAProxy runtime socket"),
	)
})

// httpServer is a plain HTTP server on loopback, for the doctor probe.
func httpServer() string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(400) }))
	DeferCleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

//go:build selftest

package main_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"

	"github.com/harp-project/harp/harness/core/verdict"
	"github.com/harp-project/harp/harness/ops/report"
	"github.com/harp-project/harp/harness/ops/selftest"
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
		Entry("bisect --finding of a crash without --suites", nil, func() []string {
			return []string{"bisect", "--finding", "crash/master/SIGSEGV/f <- g", "--good", "v3.0.0", "--bad", "v3.4.0", "--repo", "."}
		}, 3, "any suite may meet: --suites names the one to run"),
		Entry("bisect --finding of another suite than --suites", nil, func() []string {
			return []string{"bisect", "--finding", "conf-failed-reload/master-survives", "--suites", "issue:3517", "--good", "a", "--bad", "b"}
		}, 3, "is suite conf-failed-reload's, but --suites selects 3517"),
		Entry("bisect --finding by an id no run holds", nil, func() []string {
			return []string{"bisect", "--finding", "F-0000", "--reports", GinkgoT().TempDir(), "--good", "a", "--bad", "b"}
		}, 3, "holds no harp run"),
		Entry("findings over no runs", nil, func() []string { return []string{"findings", "--reports", GinkgoT().TempDir()} }, 3, "holds no harp run"),
		Entry("findings mark with an unknown status", nil, func() []string {
			return []string{"findings", "mark", "F-1234", "fixed", "v3.4.2", "--reports", GinkgoT().TempDir()}
		}, 3, `unknown status "fixed": want one of fixed-in, not-haproxy, reported, wontfix`),
		Entry("findings mark reported without the issue", nil, func() []string {
			return []string{"findings", "mark", "F-1234", "reported"}
		}, 3, "needs what it refers to"),
		Entry("harp capture with no arguments", nil, func() []string { return []string{"capture"} }, 3, "usage: harp capture"),
		Entry("--trials 0", nil, func() []string { return []string{"run", "--suites", "issue:3517", "--trials", "0"} }, 3, "want 1 to 1000"),
		Entry("--trials -1", nil, func() []string { return []string{"run", "--suites", "issue:3517", "--trials", "-1"} }, 3, "want 1 to 1000"),
		Entry("--trials 100000", nil, func() []string { return []string{"run", "--suites", "issue:3517", "--trials", "100000"} }, 3, "want 1 to 1000"),
		Entry("--shard 1/2x", nil, func() []string { return []string{"matrix", "--shard", "1/2x"} }, 3, `shard "1/2x"`),
		Entry("a shard that selects no cell", nil, func() []string {
			return []string{"matrix", "--haproxy", "deb:bookworm", "--suites", "issue:3517", "--shard", "2/2"}
		}, 3, "selects none"),
		Entry("src:/", nil, func() []string { return []string{"run", "--suites", "issue:3517", "--haproxy", "src:/"} }, 3, "not an HAProxy source tree"),
		Entry("src:~", nil, func() []string { return []string{"run", "--suites", "issue:3517", "--haproxy", "src:~"} }, 3, "no such file"),
		Entry("a missing patch, before any download", nil, func() []string {
			return []string{"run", "--suites", "issue:3517", "--haproxy", "src:deb:3.0.11,patch=/nonexistent/fix.diff"}
		}, 3, "patch file /nonexistent/fix.diff"),
		Entry("a parameter no suite takes", nil, func() []string { return []string{"run", "--suites", "issue:3517", "--param", "NODES=5"} }, 3, "parameter NODES: no selected suite takes it (they take PARALLEL, SECTIONS)"),
		Entry("a parameter out of range", nil, func() []string {
			return []string{"run", "--suites", "suite:cluster-partition", "--param", "NODES=12"}
		}, 3, "want a whole number from 3 to 9"),
		Entry("merge of the same shard twice", nil, func() []string {
			d := GinkgoT().TempDir()
			Expect(os.MkdirAll(filepath.Join(d, "run1"), 0o755)).To(Succeed())
			Expect(os.WriteFile(filepath.Join(d, "run1", "summary.json"), []byte(`{"run_id":"run1","results":[]}`), 0o644)).To(Succeed())
			Expect(os.Symlink("run1", filepath.Join(d, "latest"))).To(Succeed())
			return []string{"merge", "--reports", d, filepath.Join(d, "run1"), filepath.Join(d, "latest")}
		}, 3, "same run directory"),
		Entry("reports that cannot be written", nil, func() []string {
			return []string{"run", "--suites", "issue:3517", "--haproxy", "deb:bookworm", "--reports", readOnly()}
		}, 3, "--reports"),
		Entry("a merge into reports that cannot be written", nil, func() []string {
			return []string{"merge", "--reports", readOnly(), GinkgoT().TempDir()}
		}, 3, "--reports"),
		Entry("reports under a file", nil, func() []string {
			f := filepath.Join(GinkgoT().TempDir(), "file")
			Expect(os.WriteFile(f, nil, 0o644)).To(Succeed())
			return []string{"run", "--suites", "issue:3517", "--haproxy", "deb:bookworm", "--reports", filepath.Join(f, "reports")}
		}, 3, "--reports"),
		Entry("a doctor socket that is an HTTP server's", nil, func() []string {
			return []string{"doctor", "--socket", httpServer()}
		}, 3, "not an HAProxy runtime socket"),
		// issue #29
		Entry("a merge of shards of two matrices", nil, func() []string {
			d := GinkgoT().TempDir()
			a := shard(d, "A", "1/2", "deb:bookworm deb:trixie", "deb:bookworm")
			b := shard(d, "B", "2/2", "deb:bookworm deb:sid", "deb:sid")
			return []string{"merge", "--reports", filepath.Join(d, "M"), a, b}
		}, 3, "is shard 2/2 of another matrix than run A: builds deb:bookworm deb:sid, not deb:bookworm deb:trixie"),
		Entry("a merge of a shard without its matrix's identity", nil, func() []string {
			d := GinkgoT().TempDir()
			a := shard(d, "A", "1/2", "deb:bookworm deb:trixie", "deb:bookworm")
			Expect(os.MkdirAll(filepath.Join(d, "old"), 0o755)).To(Succeed())
			Expect(os.WriteFile(filepath.Join(d, "old", "summary.json"), []byte(`{"run_id":"old","shard":"2/2","cells":2,"results":[{"suite":"3517","build_spec":"deb:trixie","verdict":"PASS"}]}`), 0o644)).To(Succeed())
			return []string{"merge", "--reports", filepath.Join(d, "M"), a, filepath.Join(d, "old")}
		}, 3, "without its matrix's identity"),
		Entry("patch=/dev/zero", nil, func() []string {
			return []string{"images", "--haproxy", "git:" + GinkgoT().TempDir() + "@v3.0.0,patch=/dev/zero"}
		}, 3, "patch file /dev/zero: not a regular file (a device)"),
		Entry("a patch that is a FIFO", nil, func() []string {
			fifo := filepath.Join(GinkgoT().TempDir(), "fix.diff")
			Expect(syscall.Mkfifo(fifo, 0o644)).To(Succeed())
			return []string{"run", "--suites", "issue:3517", "--haproxy", "src:deb:3.0.11,patch=" + fifo}
		}, 3, "not a regular file (a FIFO)"),
		Entry("doctor --settle 100h", nil, func() []string { return []string{"doctor", "--socket", "127.0.0.1:1", "--settle", "100h"} }, 3, "--settle 100h0m0s: want 0 to 1h"),
		Entry("--cpus 100", nil, func() []string { return []string{"run", "--suites", "issue:3517", "--cpus", "100"} }, 3, "--cpus 100: this machine has"),
		Entry("--cpus NaN", nil, func() []string { return []string{"run", "--suites", "issue:3517", "--cpus", "NaN"} }, 3, "--cpus NaN: not a number"),
		Entry("fuzz with two builds", nil, func() []string { return []string{"fuzz", "peers", "--haproxy", "deb:bookworm deb:trixie"} }, 3, "takes one build spec, not 2"),
		Entry("fuzz with no build", nil, func() []string { return []string{"fuzz", "peers"} }, 3, "no build spec given"),
		Entry("bin: of a binary that is not HAProxy", nil, func() []string { return []string{"images", "--haproxy", "bin:/bin/true"} }, 3, "does not look like HAProxy: it printed no HAProxy version line"),
		Entry("a doctor socket that is a regular file", nil, func() []string {
			f := filepath.Join(GinkgoT().TempDir(), "admin.sock")
			Expect(os.WriteFile(f, nil, 0o644)).To(Succeed())
			return []string{"doctor", "--socket", f}
		}, 3, "is a regular file, not a socket"),
		Entry("a doctor socket that is a directory", nil, func() []string { return []string{"doctor", "--socket", GinkgoT().TempDir()} }, 3, "is a directory, not a socket"),
		Entry("8 doctor sockets that stream without end", nil, func() []string {
			args := []string{"doctor", "--settle", "0"}
			for range 8 {
				args = append(args, "--socket", streaming())
			}
			return args
		}, 3, "memory budget of 256 MiB"),
	)
})

// shard writes a one-cell shard of a matrix of builds x #3517 and returns
// its run directory.
func shard(root, id, which, builds, build string) string {
	GinkgoHelper()
	run := report.Run{ID: id, Shard: which, Cells: 2, Started: time.Now(),
		Matrix:  report.NewIdentity(strings.Fields(builds), "issue:3517", []string{"3517"}, nil, 0),
		Results: []report.Result{{Suite: "3517", Build: build, Name: build, Verdict: verdict.Pass}}}
	dir, err := report.Write(root, run)
	Expect(err).NotTo(HaveOccurred())
	return dir
}

// streaming is a UNIX socket that answers every command with bytes
// without end.
func streaming() string {
	path := filepath.Join(GinkgoT().TempDir(), "s.sock")
	l, err := net.Listen("unix", path)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(l.Close)
	junk := []byte(strings.Repeat("x", 64<<10))
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				for {
					if _, err := c.Write(junk); err != nil {
						return
					}
				}
			}()
		}
	}()
	return path
}

// httpServer is a plain HTTP server on loopback, for the doctor probe.
func httpServer() string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(400) }))
	DeferCleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

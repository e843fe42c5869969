//go:build selftest

package images_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"

	"github.com/harp-project/harp/harness/ops/selftest"
)

// Builds from where users keep HAProxy besides Debian: a commit of their
// clone and a release tarball by URL, with the origin in the report.
var _ = Describe("harp builds from git refs and tarball URLs", Label("sources", "issue:3517"), func() {
	It("runs #3517 on a commit of a clone, named by a relative ref, with the commit in the report", func(ctx SpecContext) {
		repo, commits := clone(ctx)
		reports := GinkgoT().TempDir()
		// HEAD~1 is 3.0.11 as released: the bug.
		s := selftest.Harp(nil, "run", "--suites", "issue:3517", "--trials", "1", "--haproxy", "git:"+repo+"@HEAD~1", "--reports", reports)
		Eventually(s).WithTimeout(10 * time.Minute).Should(gexec.Exit(1))
		Expect(s.Out.Contents()).To(ContainSubstring("REPRODUCED"))
		md, err := os.ReadFile(filepath.Join(reports, "latest", "report.md"))
		Expect(err).NotTo(HaveOccurred())
		Expect(string(md)).To(ContainSubstring("- Origin: git " + repo + " commit " + commits[0] + " (v3.0.11): import haproxy 3.0.11"))

		s = selftest.Harp(nil, "run", "--suites", "issue:3517", "--haproxy", "git:"+repo+"@no-such-ref", "--reports", reports)
		Eventually(s).WithTimeout(time.Minute).Should(gexec.Exit(3))
		Expect(output(s)).To(ContainSubstring(`no commit "no-such-ref" in ` + repo))
	}, SpecTimeout(15*time.Minute))

	It("builds flavor=asan, and ASan's report of a memory error is the crash evidence", func(ctx SpecContext) {
		reports := GinkgoT().TempDir()
		// Mutant 9 reads freed memory in `enable frontend`: a plain build
		// goes on, an ASan build stops the worker there. OPT_CFLAGS=-O0
		// (a make= option wins over the flavour's -O1) compiles in a third
		// of the time on a fresh machine, and ASan finds the same access.
		build := "src:deb:3.0.11,flavor=asan,make=OPT_CFLAGS=-O0,patch=" + selftest.Mutant("9-asan-use-after-free-enable-frontend.diff")
		s := selftest.Harp(nil, "run", "--suites", "suite:conf-runtime-limits", "--haproxy", build, "--reports", reports)
		Eventually(s).WithTimeout(12 * time.Minute).Should(gexec.Exit(1))
		Expect(s.Out.Contents()).To(MatchRegexp(`#conf-runtime-limits on 3\.0\.11-\w+-asan\+9-asan-use-after-free-enable-frontend\.diff: REPRODUCED \(disable and enable the frontend: .*; AddressSanitizer: worker \d+ of node-conf-runtime-limits: heap-use-after-free src/proxy\.c:\d+ in cli_parse_enable_frontend\)`))
		md, err := os.ReadFile(filepath.Join(reports, "latest", "report.md"))
		Expect(err).NotTo(HaveOccurred())
		Expect(string(md)).To(ContainSubstring("AddressSanitizer report: heap-use-after-free"))
		Expect(string(md)).To(MatchRegexp(`freed by thread T\d+ here:`)) // T0 or another thread: the CLI runs on any
		Expect(string(md)).To(ContainSubstring("-fsanitize=address"))    // -vv shows the flavour's flags

		s = selftest.Harp(nil, "run", "--suites", "issue:3517", "--haproxy", "src:deb:3.0.11,flavor=tsan", "--reports", reports)
		Eventually(s).WithTimeout(time.Minute).Should(gexec.Exit(3))
		Expect(output(s)).To(ContainSubstring("flavor=tsan: want minimal, full, asan or nothreads"))
	}, SpecTimeout(15*time.Minute))

	It("downloads a release tarball once, checks its sha256 and refuses one that does not match", func(ctx SpecContext) {
		data, err := os.ReadFile(selftest.Orig(ctx, "3.0.11"))
		Expect(err).NotTo(HaveOccurred())
		sum := sha256.Sum256(data)
		good := hex.EncodeToString(sum[:])
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(data) }))
		defer srv.Close()
		url := srv.URL + "/haproxy-3.0.11.tar.gz" // a new port each run: a new download

		s := selftest.Harp(nil, "run", "--suites", "issue:3517", "--trials", "1", "--haproxy", "src:"+url+",sha256="+strings.Repeat("ab", 32), "--reports", GinkgoT().TempDir())
		Eventually(s).WithTimeout(5 * time.Minute).Should(gexec.Exit(3))
		Expect(output(s)).To(ContainSubstring("sha256 mismatch: the download is " + good))

		reports := GinkgoT().TempDir()
		s = selftest.Harp(nil, "run", "--suites", "issue:3517", "--trials", "1", "--haproxy", "src:"+url+",sha256="+good, "--reports", reports)
		Eventually(s).WithTimeout(10 * time.Minute).Should(gexec.Exit(1))
		md, err := os.ReadFile(filepath.Join(reports, "latest", "report.md"))
		Expect(err).NotTo(HaveOccurred())
		Expect(string(md)).To(ContainSubstring("- Origin: tarball " + url + " (sha256 " + good + ")"))
		Expect(s.Err.Contents()).To(ContainSubstring("downloading " + url))

		// Once: the next run finds it in the cache.
		s = selftest.Harp(nil, "run", "--suites", "issue:3517", "--trials", "1", "--haproxy", "src:"+url, "--reports", reports)
		Eventually(s).WithTimeout(5 * time.Minute).Should(gexec.Exit(1))
		Expect(s.Err.Contents()).NotTo(ContainSubstring("downloading " + url))
	}, SpecTimeout(15*time.Minute))
})

// clone makes a git repository of HAProxy 3.0.11 as released (tagged
// v3.0.11) and one documentation commit after it; it returns the commits.
func clone(ctx context.Context) (string, []string) {
	GinkgoHelper()
	repo, sh := selftest.Repo(ctx, "3.0.11")
	sh("git", "add", "-A")
	sh("git", "commit", "-q", "-m", "import haproxy 3.0.11")
	sh("git", "tag", "v3.0.11")
	first := sh("git", "rev-parse", "HEAD")
	Expect(os.WriteFile(filepath.Join(repo, "doc", "harp.txt"), []byte("an ordinary change\n"), 0o644)).To(Succeed())
	sh("git", "add", "-A")
	sh("git", "commit", "-q", "-m", "doc: an ordinary change")
	return repo, []string{first, sh("git", "rev-parse", "HEAD")}
}

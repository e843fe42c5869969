//go:build selftest

package main_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"

	"github.com/harp-project/harp/harness/ops/selftest"
)

// harp bisect with #3517 as the oracle, on real builds: across the Debian
// builds the mirror serves, and across commits of a small local repository
// whose commits are real HAProxy 3.0.11 trees, with and without harp's fix.
var _ = Describe("harp bisect", Label("bisect", "issue:3517", "slow"), Ordered, func() {
	var debRun, reports string
	BeforeAll(func() {
		var err error
		reports, err = os.MkdirTemp("", "harp-bisect-")
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(os.RemoveAll, reports) // outlives each spec: the report spec reads this run
	})

	It("names 3.0.11 as the first Debian build that loses tables", func() {
		// bookworm and trixie are what apt there installs: their -security
		// builds; trixie's own 3.0.11-1+deb13u4 lies between.
		s := selftest.Harp(nil, "bisect", "--suites", "issue:3517", "--good", "deb:bookworm", "--bad", "deb:trixie", "--trials", "1", "--reports", reports)
		Eventually(s).WithTimeout(10 * time.Minute).Should(gexec.Exit(0))
		out := string(s.Out.Contents())
		// Range in Debian's order, both ends checked, then the middle.
		Expect(out).To(ContainSubstring("Range: 2.6.12-1+deb12u4 .. 3.0.11-1+deb13u5 (3 builds)"))
		Expect(out).To(ContainSubstring("**first bad build (the issue reproduces from here on)**: `3.0.11-1+deb13u4`"))
		Expect(out).To(MatchRegexp("`2.6.12-1\\+deb12u4` \\| PASS \\| 0/1 \\| good"))
		Expect(out).To(MatchRegexp("`3.0.11-1\\+deb13u5` \\| REPRODUCED \\| 1/1 \\| bad"))
		latest, err := os.Readlink(filepath.Join(reports, "latest"))
		Expect(err).NotTo(HaveOccurred())
		debRun = filepath.Join(reports, latest)
		Expect(filepath.Join(debRun, "bisect.md")).To(BeAnExistingFile())
	})

	It("writes the upstream issue report from that run and posts it to a (fake) GitHub API", func() {
		var mu sync.Mutex
		var posted struct{ Body string }
		var auth, path string
		api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			defer mu.Unlock()
			auth, path = r.Header.Get("Authorization"), r.URL.Path
			if auth != "Bearer good-token" {
				w.WriteHeader(http.StatusUnauthorized)
				io.WriteString(w, `{"message":"Bad credentials"}`)
				return
			}
			json.NewDecoder(r.Body).Decode(&posted)
			w.WriteHeader(http.StatusCreated)
			io.WriteString(w, `{"html_url":"https://github.example/haproxy/haproxy/issues/3517#issuecomment-1"}`)
		}))
		defer api.Close()

		s := selftest.Harp([]string{"GITHUB_TOKEN=", "GH_TOKEN="}, "report", "--issue", "3517", "--run", debRun, "--post", "haproxy/haproxy#3517")
		Eventually(s).WithTimeout(time.Minute).Should(gexec.Exit(3))
		Expect(s.Err.Contents()).To(ContainSubstring("GITHUB_TOKEN"))

		s = selftest.Harp([]string{"GITHUB_TOKEN=wrong", "HARP_GITHUB_API=" + api.URL}, "report", "--issue", "3517", "--run", debRun, "--post", "haproxy/haproxy#3517")
		Eventually(s).WithTimeout(time.Minute).Should(gexec.Exit(3))
		Expect(s.Err.Contents()).To(ContainSubstring("401"))
		Expect(s.Err.Contents()).NotTo(ContainSubstring("wrong"))

		s = selftest.Harp([]string{"GITHUB_TOKEN=good-token", "HARP_GITHUB_API=" + api.URL}, "report", "--issue", "haproxy/haproxy#3517", "--run", debRun, "--post", "haproxy/haproxy#3517")
		Eventually(s).WithTimeout(time.Minute).Should(gexec.Exit(0))
		Expect(s.Err.Contents()).To(ContainSubstring("posted https://github.example/haproxy/haproxy/issues/3517#issuecomment-1"))
		mu.Lock()
		defer mu.Unlock()
		Expect(path).To(Equal("/repos/haproxy/haproxy/issues/3517/comments"))
		md := posted.Body
		Expect(md).To(Equal(string(s.Out.Contents())), "what was posted is what was written")
		for _, want := range []string{
			"<details><summary>haproxy -vv: 3.0.11-1+deb13u4</summary>", // builds, collapsed
			"<details><summary>Configuration",                           // the rendered configuration
			"make test-3517 HAPROXY='deb:2.6.12-1+deb12u4 deb:3.0.11-1+deb13u5 deb:3.0.11-1+deb13u4'",
			"| **REPRODUCED** | 1 of 1 reloads violated the expectation |",
			"- `deb:3.0.11-1+deb13u5`: Debian trixie-security (", // the pocket each build came from
			"**First violation**: 3.0.11-1+deb13u5, reload 1: ",
			"Runtime transcript up to the violation",
		} {
			Expect(md).To(ContainSubstring(want))
		}
		Expect(filepath.Join(debRun, "issue-3517.md")).To(BeAnExistingFile())
	})

	It("gets through a stretch whose resync never finishes: one run per stuck commit, and the answer as one of N; with --find-fix the fix", func(ctx SpecContext) {
		repo, commits := haproxyRepo(ctx)
		reports := GinkgoT().TempDir()
		s := selftest.Harp(nil, "bisect", "--suites", "issue:3517", "--repo", repo, "--good", commits[0], "--bad", commits[5], "--reports", reports)
		Eventually(s).WithTimeout(20 * time.Minute).Should(gexec.Exit(2))
		out := string(s.Out.Contents())
		Expect(out).To(ContainSubstring("Range: " + commits[0][:12] + " .. " + commits[5][:12] + " (6 builds)"))
		// The stuck commits: one run each (its three reloads side by side
		// on three nodes, each stuck before its reload), never retried.
		// #3517 decides a reload once its old worker is seen leaving (the
		// information limit), so only a resync stuck before the reload
		// leaves a commit untestable.
		for _, c := range []string{commits[2][:12] + " peers: the initial resync never finishes", commits[3][:12] + " peers: stop every section with one latch"} {
			Expect(strings.Count(out, "`"+c+"`")).To(Equal(2), "one row in the table and one in the list of suspects:\n%s", out)
			Expect(out).To(MatchRegexp(regexp.QuoteMeta("`"+c+"`") + " \\| INCONCLUSIVE \\| 0/3 \\| skip \\| [0-9.]+ s \\([0-9.]+ s\\) \\| reload 1: before reload: initial resync of section \\w+ never finished \\(flags=0x[0-9a-f]+ after 20s\\), unchanged for the last [0-9]+s"))
		}
		Expect(out).To(ContainSubstring("**The first bad build is one of these 3**, after `" + commits[1][:12] + " doc: an ordinary change` (good) up to `" + commits[4][:12] + " peers: the initial resync finishes again` (bad)"))
		Expect(out).To(MatchRegexp("Cost: 6 runs \\(2 bad, 2 good, 2 skip\\)"))
		// bisect.md and bisect.json were written (after every step, and at the end).
		latest, err := os.Readlink(filepath.Join(reports, "latest"))
		Expect(err).NotTo(HaveOccurred())
		md, err := os.ReadFile(filepath.Join(reports, latest, "bisect.md"))
		Expect(err).NotTo(HaveOccurred())
		Expect(string(md)).To(ContainSubstring("**The first bad build is one of these 3**"))
		Expect(filepath.Join(reports, latest, "bisect.json")).To(BeAnExistingFile())
		Expect(s.Err.Contents()).To(MatchRegexp("untested builds left between .* about [0-9]+ more steps"))

		// The fix comes back in the last commit: the first good one after the bug.
		s = selftest.Harp(nil, "bisect", "--suites", "issue:3517", "--repo", repo, "--bad", commits[4], "--good", "HEAD", "--find-fix", "--trials", "1",
			"--reports", GinkgoT().TempDir())
		Eventually(s).WithTimeout(10 * time.Minute).Should(gexec.Exit(0))
		out = string(s.Out.Contents())
		Expect(out).To(ContainSubstring("**first good build (the issue is fixed from here on)**: `" + commits[6][:12] + "` peers: per-section soft-stop latches again"))
		Expect(out).To(MatchRegexp("`" + commits[4][:12] + " [^`]*` \\| REPRODUCED \\| 1/1 \\| bad"))
	}, SpecTimeout(25*time.Minute))
})

// haproxyRepo makes a git repository of real HAProxy trees: 3.0.11 with
// harp's #3517 fix, a documentation change, then a stretch whose
// workers never finish their initial resync (harp's patch: with no remote
// peer to answer, no timeout gives up on it), inside which the fix is taken out again (the bug), the end of the
// stretch, one more ordinary commit, and the fix again. It returns the
// commits oldest first.
func haproxyRepo(ctx context.Context) (string, []string) {
	GinkgoHelper()
	repo, sh := selftest.Repo(ctx, "3.0.11")
	var commits []string
	commit := func(subject string) {
		sh("git", "add", "-A")
		sh("git", "commit", "-q", "-m", subject)
		commits = append(commits, sh("git", "rev-parse", "HEAD"))
	}
	stuck := filepath.Join(selftest.Root(), "fixtures", "patches", "bisect", "resync-never-finishes.diff")
	sh("patch", "-p1", "--batch", "-i", fix3517)
	commit("import haproxy 3.0.11 with per-section soft-stop latches")
	doc := filepath.Join(repo, "doc", "peers.txt")
	appendFile(doc, "\nharp: an ordinary documentation change.\n")
	commit("doc: an ordinary change")
	sh("patch", "-p1", "--batch", "-i", stuck)
	commit("peers: the initial resync never finishes")
	sh("patch", "-p1", "-R", "--batch", "-i", fix3517)
	commit("peers: stop every section with one latch")
	sh("patch", "-p1", "-R", "--batch", "-i", stuck)
	commit("peers: the initial resync finishes again")
	appendFile(doc, "harp: another ordinary change.\n")
	commit("doc: another ordinary change")
	sh("patch", "-p1", "--batch", "-i", fix3517)
	commit("peers: per-section soft-stop latches again")
	return repo, commits
}

func appendFile(path, text string) {
	GinkgoHelper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	Expect(err).NotTo(HaveOccurred())
	_, err = f.WriteString(text)
	Expect(err).NotTo(HaveOccurred())
	Expect(f.Close()).To(Succeed())
}

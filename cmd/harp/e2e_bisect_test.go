//go:build selftest

package main_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"

	"github.com/harp-project/harp/harness/selftest"
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
		s := selftest.Harp(nil, "bisect", "--suite", "issue:3517", "--good", "deb:bookworm", "--bad", "deb:experimental", "--trials", "1", "--reports", reports)
		Eventually(s).WithTimeout(10 * time.Minute).Should(gexec.Exit(0))
		out := string(s.Out.Contents())
		// Range in Debian's order, both ends checked, then the middle.
		Expect(out).To(ContainSubstring("Range: 2.6.12-1+deb12u3 .. 3.4.7-1 (4 builds)"))
		Expect(out).To(ContainSubstring("**first bad build (the issue reproduces from here on)**: `3.0.11-1+deb13u4`"))
		Expect(out).To(MatchRegexp("`2.6.12-1\\+deb12u3` \\| PASS \\| 0/1 \\| good"))
		Expect(out).To(MatchRegexp("`3.4.7-1` \\| REPRODUCED \\| 1/1 \\| bad"))
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
			"make test-3517 HAPROXY='deb:2.6.12-1+deb12u3 deb:3.4.7-1 deb:3.0.11-1+deb13u4'",
			"| **REPRODUCED** | 1 of 1 reloads violated the expectation |",
			"**First violation**: 3.4.7-1, reload 1: ",
			"Runtime transcript up to the violation",
		} {
			Expect(md).To(ContainSubstring(want))
		}
		Expect(filepath.Join(debRun, "issue-3517.md")).To(BeAnExistingFile())
	})

	It("names the commit that brought the bug back, skipping one that does not build, and with --find-fix the one that fixed it", func(ctx SpecContext) {
		repo, commits := haproxyRepo(ctx)
		s := selftest.Harp(nil, "bisect", "--suite", "issue:3517", "--repo", repo, "--good", commits[0], "--bad", commits[5], "--trials", "1",
			"--reports", GinkgoT().TempDir())
		Eventually(s).WithTimeout(20 * time.Minute).Should(gexec.Exit(0))
		out := string(s.Out.Contents())
		Expect(out).To(ContainSubstring("**first bad build (the issue reproduces from here on)**: `" + commits[4][:12] + "` peers: stop every section with one latch"))
		Expect(out).To(MatchRegexp("`" + commits[2][:12] + " build: break the build on purpose` \\| ERROR \\| 0/0 \\| skip"))
		Expect(out).To(ContainSubstring("Range: " + commits[0][:12] + " .. " + commits[5][:12] + " (6 builds)"))

		// The fix comes back in the last commit: the first good one after the bug.
		s = selftest.Harp(nil, "bisect", "--suite", "issue:3517", "--repo", repo, "--bad", commits[4], "--good", "HEAD", "--find-fix", "--trials", "1",
			"--reports", GinkgoT().TempDir())
		Eventually(s).WithTimeout(10 * time.Minute).Should(gexec.Exit(0))
		out = string(s.Out.Contents())
		Expect(out).To(ContainSubstring("**first good build (the issue is fixed from here on)**: `" + commits[6][:12] + "` peers: per-section soft-stop latches again"))
		Expect(out).To(MatchRegexp("`" + commits[4][:12] + " [^`]*` \\| REPRODUCED \\| 1/1 \\| bad"))
	}, SpecTimeout(25*time.Minute))
})

// haproxyRepo makes a git repository of real HAProxy trees: 3.0.11 with
// harp's #3517 fix, a documentation change, a commit that does not build,
// its revert, the commit that takes the fix out again (the bug), one more
// ordinary commit, and the fix again. It returns the commits oldest first.
func haproxyRepo(ctx context.Context) (string, []string) {
	GinkgoHelper()
	m, err := selftest.Builder.Mirror(ctx)
	Expect(err).NotTo(HaveOccurred())
	b, err := m.Resolve(ctx, "3.0.11")
	Expect(err).NotTo(HaveOccurred())
	orig, err := m.FetchOrig(ctx, b.Version)
	Expect(err).NotTo(HaveOccurred())
	repo := GinkgoT().TempDir()
	sh := func(name string, args ...string) string {
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=harp", "GIT_AUTHOR_EMAIL=harp@example.invalid",
			"GIT_COMMITTER_NAME=harp", "GIT_COMMITTER_EMAIL=harp@example.invalid")
		out, err := cmd.CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), "%s %v: %s", name, args, out)
		return strings.TrimSpace(string(out))
	}
	var commits []string
	commit := func(subject string) {
		sh("git", "add", "-A")
		sh("git", "commit", "-q", "-m", subject)
		commits = append(commits, sh("git", "rev-parse", "HEAD"))
	}
	sh("tar", "-xf", orig, "--strip-components=1")
	sh("git", "init", "-q")
	sh("patch", "-p1", "--batch", "-i", fix3517)
	commit("import haproxy 3.0.11 with per-section soft-stop latches")
	doc := filepath.Join(repo, "doc", "peers.txt")
	appendFile(doc, "\nharp: an ordinary documentation change.\n")
	commit("doc: an ordinary change")
	main := filepath.Join(repo, "src", "haproxy.c")
	src, err := os.ReadFile(main)
	Expect(err).NotTo(HaveOccurred())
	Expect(os.WriteFile(main, append([]byte("#error harp: this commit does not build\n"), src...), 0o644)).To(Succeed())
	commit("build: break the build on purpose")
	Expect(os.WriteFile(main, src, 0o644)).To(Succeed())
	commit("build: repair the build")
	sh("patch", "-p1", "-R", "--batch", "-i", fix3517)
	commit("peers: stop every section with one latch")
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

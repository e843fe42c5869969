//go:build selftest

package main_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/moby/moby/client"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	"github.com/onsi/gomega/gexec"
	"github.com/testcontainers/testcontainers-go"

	"github.com/harp-project/harp/harness/live/cache"
	"github.com/harp-project/harp/harness/live/child"
	"github.com/harp-project/harp/harness/live/engine"
	"github.com/harp-project/harp/harness/ops/selftest"
)

// networksOf counts the networks a harp process owns.
func networksOf(ctx context.Context, pid int) int {
	GinkgoHelper()
	res, err := selftest.Docker.NetworkList(ctx, client.NetworkListOptions{Filters: client.Filters{}.Add("label", engine.LabelPID+"="+strconv.Itoa(pid))})
	Expect(err).NotTo(HaveOccurred())
	return len(res.Items)
}

// compilerOf says whether a process marked as a child of that harp runs.
func compilerOf(pid int) bool {
	envs, _ := filepath.Glob("/proc/[0-9]*/environ")
	for _, e := range envs {
		b, err := os.ReadFile(e)
		if err == nil && bytes.Contains(b, []byte(child.Env+"="+strconv.Itoa(pid)+".")) {
			return true
		}
	}
	return false
}

// tempFilesOf lists the temporary files and directories that harp left.
func tempFilesOf(pid int) []string {
	var out []string
	for _, dir := range []string{os.TempDir(), cache.Dir()} {
		for _, p := range []string{"harp-local-", "deb-", "bin-", "backend-"} {
			m, _ := filepath.Glob(filepath.Join(dir, p+strconv.Itoa(pid)+".*"))
			out = append(out, m...)
		}
	}
	return out
}

// containersOf lists the containers a harp process owns.
func containersOf(ctx context.Context, pid int) int {
	GinkgoHelper()
	res, err := selftest.Docker.ContainerList(ctx, client.ContainerListOptions{All: true,
		Filters: client.Filters{}.Add("label", engine.LabelPID+"="+strconv.Itoa(pid))})
	Expect(err).NotTo(HaveOccurred())
	return len(res.Items)
}

var _ = Describe("bad input gets a clear error and leaves nothing running", Label("errors"), func() {
	DescribeTable("`harp run` exits 3 (ERROR) and names the problem",
		func(build string, env []string, want string) {
			s := selftest.Harp(env, "run", "--suites", "issue:3517", "--haproxy", build)
			Eventually(s).WithTimeout(5 * time.Minute).Should(gexec.Exit(3))
			Expect(string(s.Out.Contents()) + string(s.Err.Contents())).To(ContainSubstring(want))
			Expect(containersOf(context.Background(), s.Command.Process.Pid)).To(BeZero())
		},
		Entry("unknown scheme", "rpm:3.0", nil, `unknown scheme "rpm"`),
		Entry("version not served", "deb:9.9.9", nil, "deb:9.9.9 is not served by the Debian mirror; served: "),
		Entry("missing source", "src:/nonexistent/haproxy.tar.gz", nil, "/nonexistent/haproxy.tar.gz: no such file or directory"),
		Entry("missing patch file", "src:deb:3.0.11,patch=/nonexistent/fix.diff", nil, "patch file /nonexistent/fix.diff"),
		Entry("patch that does not apply, with its reject", "src:deb:2.6.12,patch="+fix3517, nil, "does not apply"),
		Entry("compile error, with the log's tail", "src:deb:2.6.12,patch="+filepath.Join(selftest.Root(), "cmd", "harp", "testdata", "break-compile.diff"), nil,
			"#error harp self-test: this patch breaks the build on purpose"),
		Entry("Docker not reachable", "deb:bookworm", []string{"DOCKER_HOST=unix:///nonexistent/selftest.Docker.sock"}, "Docker is not reachable"),
	)

	It("shows the reject of a patch that does not apply", func() {
		s := selftest.Harp(nil, "images", "--haproxy", "src:deb:2.6.12,patch="+fix3517)
		Eventually(s).WithTimeout(5 * time.Minute).Should(gexec.Exit(3))
		Expect(s.Err).To(gbytes.Say(`(?s)does not apply.*FAILED.*src/peers.c.rej.*@@`))
	})

	It("refuses a label filter that selects no suite", func() {
		s := selftest.Harp(nil, "run", "--suites", "issue:0000", "--haproxy", "deb:bookworm")
		Eventually(s).WithTimeout(time.Minute).Should(gexec.Exit(3))
		Expect(s.Err).To(gbytes.Say("selects no suite"))
	})

	It("removes its containers when interrupted mid-run", func(ctx context.Context) {
		selftest.Image(ctx, "deb:bookworm") // built beforehand, so the run reaches its trials
		s := selftest.Harp(nil, "run", "--suites", "issue:3517", "--haproxy", "deb:bookworm")
		pid := s.Command.Process.Pid
		// Mid-run: the trials have begun (#3517's nodes start side by side,
		// so their count says nothing of where the run is).
		Eventually(func() string { return string(s.Out.Contents()) + string(s.Err.Contents()) }).WithTimeout(time.Minute).WithPolling(100 * time.Millisecond).Should(ContainSubstring("reload 1 of 3"))
		Expect(containersOf(ctx, pid)).To(BeNumerically(">=", 1))
		s.Signal(syscall.SIGINT)
		Eventually(s).WithTimeout(time.Minute).Should(gexec.Exit(3))
		Expect(s.Out).To(gbytes.Say(`ERROR \(interrupted \(SIGINT\)`)) // not "context canceled"
		Expect(containersOf(ctx, pid)).To(BeZero())
	})

	It("sweeps containers a killed run left behind", func(ctx context.Context) {
		img := selftest.Image(ctx, "deb:bookworm")
		// A container owned by a process that no longer exists.
		dead := exec.Command("true")
		Expect(dead.Run()).To(Succeed())
		labels := engine.Labels("killed-run")
		labels[engine.LabelPID] = fmt.Sprint(dead.Process.Pid)
		labels[engine.LabelOwner] = fmt.Sprint(dead.Process.Pid, ".1")
		c, err := testcontainers.Run(ctx, img.Tag, testcontainers.WithLabels(labels),
			testcontainers.WithEntrypoint("/usr/sbin/haproxy"), testcontainers.WithCmd("-vv"))
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { c.Terminate(context.Background()) })
		Expect(containersOf(ctx, dead.Process.Pid)).To(Equal(1))
		s := selftest.Harp(nil, "sweep")
		Eventually(s).WithTimeout(time.Minute).Should(gexec.Exit(0))
		Expect(containersOf(ctx, dead.Process.Pid)).To(BeZero())
	})

	// kill -9 leaves everything behind; the next harp removes it all:
	// containers, networks, temporary files and the compiler still running.
	It("removes what a run killed with SIGKILL left, at the next start", func(ctx context.Context) {
		selftest.Image(ctx, "deb:bookworm")
		// A compile of its own (new make variables: nothing cached), killed
		// with the run. It starts first: the run is killed as soon as its
		// first container is listed, before its trial creates another (a
		// create the engine finishes after its client died can show up
		// after any sweep).
		c := selftest.Harp(nil, "images", "--haproxy", fmt.Sprintf("src:deb:2.6.12,make=DEFINE=-DHARP_NONCE=%d;", time.Now().UnixNano()))
		Eventually(func() bool { return compilerOf(c.Command.Process.Pid) }).WithTimeout(5 * time.Minute).WithPolling(200 * time.Millisecond).Should(BeTrue())
		s := selftest.Harp(nil, "run", "--suites", "issue:3519", "--haproxy", "deb:bookworm", "--param", "PARALLEL=1")
		pid := s.Command.Process.Pid
		Eventually(func() int { return containersOf(ctx, pid) }).WithTimeout(time.Minute).WithPolling(100 * time.Millisecond).Should(Equal(1))
		Expect(compilerOf(c.Command.Process.Pid)).To(BeTrue(), "the compile ended before the run was killed")
		s.Kill()
		c.Kill()
		Eventually(s).Should(gexec.Exit())
		Eventually(c).Should(gexec.Exit())
		Expect(containersOf(ctx, pid)).To(Equal(1), "kill -9 left the run's container")
		Expect(compilerOf(c.Command.Process.Pid)).To(BeTrue(), "kill -9 left the compiler running")

		next := selftest.Harp(nil, "images", "--haproxy", "deb:bookworm")
		Eventually(next).WithTimeout(5 * time.Minute).Should(gexec.Exit(0))
		Expect(containersOf(ctx, pid)).To(BeZero())
		Expect(networksOf(ctx, pid)).To(BeZero())
		Expect(compilerOf(c.Command.Process.Pid)).To(BeFalse(), "the orphaned compiler still runs")
		Expect(tempFilesOf(pid)).To(BeEmpty())
	})

	It("reuses an image it already built", func(ctx context.Context) {
		first := selftest.Image(ctx, "deb:bookworm")
		again := selftest.Image(ctx, "deb:bookworm")
		Expect(again.Reused).To(BeTrue())
		Expect(again.Tag).To(Equal(first.Tag))
		Expect(again.VV).To(ContainSubstring("HAProxy version 2.6.12"))
	})
})

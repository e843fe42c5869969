//go:build selftest

package main_test

import (
	"context"
	"fmt"
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

	"github.com/harp-project/harp/harness/engine"
	"github.com/harp-project/harp/harness/selftest"
)

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
			s := selftest.Harp(env, "run", "--label-filter", "issue:3517", "--haproxy", build)
			Eventually(s).WithTimeout(5 * time.Minute).Should(gexec.Exit(3))
			Expect(string(s.Out.Contents()) + string(s.Err.Contents())).To(ContainSubstring(want))
			Expect(containersOf(context.Background(), s.Command.Process.Pid)).To(BeZero())
		},
		Entry("unknown scheme", "rpm:3.0", nil, `unknown scheme "rpm"`),
		Entry("version not served", "deb:9.9.9", nil, "deb:9.9.9 is not served by the Debian mirror; served: "),
		Entry("missing source", "src:/nonexistent/haproxy.tar.gz", nil, "no such source directory or tarball"),
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
		s := selftest.Harp(nil, "run", "--label-filter", "issue:0000", "--haproxy", "deb:bookworm")
		Eventually(s).WithTimeout(time.Minute).Should(gexec.Exit(3))
		Expect(s.Err).To(gbytes.Say("selects no suite"))
	})

	It("removes its containers when interrupted mid-run", func(ctx context.Context) {
		selftest.Image(ctx, "deb:bookworm") // built beforehand, so the run reaches its trials
		s := selftest.Harp(nil, "run", "--label-filter", "issue:3517", "--haproxy", "deb:bookworm")
		pid := s.Command.Process.Pid
		Eventually(func() int { return containersOf(ctx, pid) }).WithTimeout(time.Minute).WithPolling(100 * time.Millisecond).Should(Equal(1))
		s.Signal(syscall.SIGINT)
		Eventually(s).WithTimeout(time.Minute).Should(gexec.Exit(3))
		Expect(s.Out).To(gbytes.Say("ERROR"))
		Expect(containersOf(ctx, pid)).To(BeZero())
	})

	It("sweeps containers a killed run left behind", func(ctx context.Context) {
		img := selftest.Image(ctx, "deb:bookworm")
		// A container owned by a process that no longer exists.
		dead := exec.Command("true")
		Expect(dead.Run()).To(Succeed())
		labels := engine.Labels("killed-run")
		labels[engine.LabelPID] = fmt.Sprint(dead.Process.Pid)
		c, err := testcontainers.Run(ctx, img.Tag, testcontainers.WithLabels(labels),
			testcontainers.WithEntrypoint("/usr/sbin/haproxy"), testcontainers.WithCmd("-vv"))
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { c.Terminate(context.Background()) })
		Expect(containersOf(ctx, dead.Process.Pid)).To(Equal(1))
		s := selftest.Harp(nil, "sweep")
		Eventually(s).WithTimeout(time.Minute).Should(gexec.Exit(0))
		Expect(containersOf(ctx, dead.Process.Pid)).To(BeZero())
	})

	It("reuses an image it already built", func(ctx context.Context) {
		first := selftest.Image(ctx, "deb:bookworm")
		again := selftest.Image(ctx, "deb:bookworm")
		Expect(again.Reused).To(BeTrue())
		Expect(again.Tag).To(Equal(first.Tag))
		Expect(again.VV).To(ContainSubstring("HAProxy version 2.6.12"))
	})
})

//go:build selftest

package images_test

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"

	"github.com/moby/moby/client"

	"github.com/harp-project/harp/harness/ops/selftest"
)

// image: builds from a real registry (Debian's docker-registry on
// 127.0.0.1): a harp-built image pushed under an official-looking name,
// removed here, then named by image:: pulled once, used locally after.
var _ = Describe("harp runs images from a registry", Label("sources", "image", "issue:3517"), Ordered, func() {
	var addr string
	var registry *exec.Cmd
	BeforeAll(func() {
		bin, err := exec.LookPath("docker-registry")
		Expect(err).NotTo(HaveOccurred(), "Debian's docker-registry package is needed (.ci/run and scripts/deps.sh install it)")
		l, err := net.Listen("tcp", "127.0.0.1:0")
		Expect(err).NotTo(HaveOccurred())
		addr = l.Addr().String()
		l.Close()
		dir := GinkgoT().TempDir()
		cfg := filepath.Join(dir, "config.yml")
		Expect(os.WriteFile(cfg, []byte(fmt.Sprintf("version: 0.1\nstorage:\n  filesystem:\n    rootdirectory: %s\n  delete:\n    enabled: true\nhttp:\n  addr: %s\n", filepath.Join(dir, "data"), addr)), 0o644)).To(Succeed())
		registry = exec.Command(bin, "serve", cfg)
		registry.Stdout, registry.Stderr = GinkgoWriter, GinkgoWriter
		Expect(registry.Start()).To(Succeed())
		DeferCleanup(func() { registry.Process.Kill(); registry.Wait() })
		Eventually(func() int {
			res, err := http.Get("http://" + addr + "/v2/")
			if err != nil {
				return 0
			}
			res.Body.Close()
			return res.StatusCode
		}).WithTimeout(30 * time.Second).WithPolling(200 * time.Millisecond).Should(Equal(200))
	})

	// push tags a harp image as name, pushes it and removes the name here.
	push := func(ctx context.Context, source, name string) {
		GinkgoHelper()
		_, err := selftest.Docker.ImageTag(ctx, client.ImageTagOptions{Source: source, Target: name})
		Expect(err).NotTo(HaveOccurred())
		res, err := selftest.Docker.ImagePush(ctx, name, client.ImagePushOptions{RegistryAuth: "e30="}) // {}: no credentials
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Wait(ctx)).To(Succeed())
		_, err = selftest.Docker.ImageRemove(ctx, name, client.ImageRemoveOptions{})
		Expect(err).NotTo(HaveOccurred())
	}
	// leftovers counts the image-build containers the spec's own harp
	// processes left (by their pid label): other packages' self-tests
	// build images at the same time.
	var pids []string
	started := func(s *gexec.Session) *gexec.Session {
		pids = append(pids, strconv.Itoa(s.Command.Process.Pid))
		return s
	}
	leftovers := func(ctx context.Context) int {
		res, err := selftest.Docker.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: client.Filters{}.Add("label", "harp.run=image-build")})
		Expect(err).NotTo(HaveOccurred())
		n := 0
		for _, c := range res.Items {
			if slices.Contains(pids, c.Labels["harp.pid"]) {
				n++
			}
		}
		return n
	}

	It("pulls image:127.0.0.1:PORT/library/haproxy:TAG once, runs it as every build, and records its digest", func(ctx SpecContext) {
		name := addr + "/library/haproxy:2.6-harp" // an image with a shell, and a distribution's layout
		push(ctx, selftest.Image(ctx, "deb:bookworm").Tag, name)
		reports := GinkgoT().TempDir()
		s := started(selftest.Harp(nil, "run", "--suites", "issue:3517", "--trials", "1", "--haproxy", "image:"+name, "--reports", reports))
		passOrCrash(s)
		Expect(s.Err.Contents()).To(ContainSubstring("pulling " + name))
		Expect(s.Out.Contents()).To(ContainSubstring("#3517 on 2.6.12-1+deb12u4: PASS"))
		md, err := os.ReadFile(filepath.Join(reports, "latest", "report.md"))
		Expect(err).NotTo(HaveOccurred())
		Expect(string(md)).To(MatchRegexp(`- Origin: image ` + addr + `/library/haproxy:2\.6-harp \(` + addr + `/library/haproxy@sha256:[0-9a-f]{64}; image id sha256:[0-9a-f]{64}\)`))
		sum, err := os.ReadFile(filepath.Join(reports, "latest", "summary.json"))
		Expect(err).NotTo(HaveOccurred())
		Expect(string(sum)).To(MatchRegexp(`"origin": "image [^"]*@sha256:[0-9a-f]{64}`))

		// Present now: no pull.
		s = started(selftest.Harp(nil, "run", "--suites", "issue:3517", "--trials", "1", "--haproxy", "image:"+name, "--reports", reports))
		passOrCrash(s)
		Expect(s.Err.Contents()).NotTo(ContainSubstring("pulling"))

		// A shell-less image (a source build): found and run all the same.
		shellless := addr + "/team/haproxy:3.0.11-src"
		push(ctx, selftest.Image(ctx, "src:deb:3.0.11").Tag, shellless)
		s = started(selftest.Harp(nil, "run", "--suites", "issue:3517", "--trials", "1", "--haproxy", "image:"+shellless, "--reports", reports))
		Eventually(s).WithTimeout(5 * time.Minute).Should(gexec.Exit(1))
		Expect(s.Out.Contents()).To(ContainSubstring("REPRODUCED"))
		Expect(leftovers(ctx)).To(BeZero())
	}, SpecTimeout(15*time.Minute))

	It("names an unknown image, an image without haproxy and a registry that is down, exits 3 and leaves nothing", func(ctx SpecContext) {
		nohaproxy := addr + "/library/nginx:1"
		push(ctx, tinyImage(ctx), nohaproxy)
		for _, c := range []struct{ spec, msg string }{
			{"image:" + addr + "/library/haproxy:no-such-tag", "pulling " + addr + "/library/haproxy:no-such-tag"},
			{"image:" + nohaproxy, "no haproxy in image " + nohaproxy + " (looked in "},
			{"image:" + nohaproxy + ",bin=/usr/sbin/haproxy", "has no file /usr/sbin/haproxy (bin=)"},
		} {
			s := started(selftest.Harp(nil, "run", "--suites", "issue:3517", "--haproxy", c.spec, "--reports", GinkgoT().TempDir()))
			Eventually(s).WithTimeout(5 * time.Minute).Should(gexec.Exit(3))
			Expect(output(s)).To(ContainSubstring(c.msg))
		}
		registry.Process.Kill()
		registry.Wait()
		s := started(selftest.Harp(nil, "run", "--suites", "issue:3517", "--haproxy", "image:"+addr+"/library/haproxy:3.2", "--reports", GinkgoT().TempDir()))
		Eventually(s).WithTimeout(5 * time.Minute).Should(gexec.Exit(3))
		Expect(output(s)).To(ContainSubstring("pulling " + addr + "/library/haproxy:3.2"))
		Expect(output(s)).To(ContainSubstring("connection refused"))
		Expect(leftovers(ctx)).To(BeZero())
	}, SpecTimeout(10*time.Minute))
})

// output is what harp printed, both streams (an ERROR's reason is on the
// verdict line, its detail on stderr).
func output(s *gexec.Session) string { return string(s.Out.Contents()) + string(s.Err.Contents()) }

// tinyImage imports an image of one small file: no haproxy, no shell.
func tinyImage(ctx context.Context) string {
	GinkgoHelper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	body := []byte("not haproxy\n")
	Expect(tw.WriteHeader(&tar.Header{Name: "etc/motd", Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg})).To(Succeed())
	tw.Write(body)
	Expect(tw.Close()).To(Succeed())
	tag := "harp-selftest-tiny:1"
	res, err := selftest.Docker.ImageImport(ctx, client.ImageImportSource{Source: &buf, SourceName: "-"}, tag, client.ImageImportOptions{})
	Expect(err).NotTo(HaveOccurred())
	io.Copy(io.Discard, res)
	res.Close()
	return tag
}

// passOrCrash waits for a #3517 run on 2.6.12: PASS (exit 0), or exit 1
// when its old worker died on the reload (2.6.12 does now and then, in
// _fd_delete_orphan): then only the crash row is REPRODUCED.
func passOrCrash(s *gexec.Session) {
	GinkgoHelper()
	Eventually(s).WithTimeout(5 * time.Minute).Should(gexec.Exit())
	if s.ExitCode() == 1 {
		Expect(s.Out.Contents()).To(MatchRegexp(`#crash on 2\.6\.12-1\+deb12u4: REPRODUCED`))
		return
	}
	Expect(s.ExitCode()).To(Equal(0))
}

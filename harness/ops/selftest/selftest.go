// Package selftest is what harp's self-tests share: they run real suites
// on real HAProxy builds (Docker) and assert the verdicts those builds
// really give. Each suite package has one file of them, built with the
// `selftest` tag (make selftest), selected by the suite's own labels.
package selftest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/moby/moby/client"
	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"

	"github.com/harp-project/harp/harness/core/spec"
	"github.com/harp-project/harp/harness/core/suite"
	"github.com/harp-project/harp/harness/core/verdict"
	"github.com/harp-project/harp/harness/live/cache"
	"github.com/harp-project/harp/harness/live/engine"
	"github.com/harp-project/harp/harness/ops/report"
	"github.com/harp-project/harp/harness/ops/runner"
	"github.com/harp-project/harp/images"
)

var (
	// Docker, Builder and RunID are set by Run before any spec.
	Docker  *client.Client
	Builder *images.Builder
	RunID   string

	harpOnce sync.Once
	harpBin  string
	harpErr  error
)

// Run runs the package's specs; everything they started is removed after.
func Run(t *testing.T, name string) {
	gomega.RegisterFailHandler(ginkgo.Fail)
	ctx := context.Background()
	var err error
	if Docker, err = engine.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(cache.Dir(), 0o755); err != nil {
		t.Fatal(err)
	}
	Builder = &images.Builder{Docker: Docker, Cache: cache.Dir()}
	RunID = "selftest-" + report.NewID()
	defer func() {
		engine.SweepRun(ctx, Docker, RunID)
		gexec.CleanupBuildArtifacts()
	}()
	ginkgo.RunSpecs(t, name)
}

// Describe is a container for a suite's self-tests, labelled with the
// suite's own labels (so `make selftest LABELS=issue:3517` selects it).
func Describe(s *suite.Suite, body func(), decorations ...any) bool {
	return ginkgo.Describe(s.Name()+": "+s.Title, append(decorations, ginkgo.Label(s.Labels...), body)...)
}

// Image builds (or finds) the image for a build spec.
func Image(ctx context.Context, raw string) *images.Image {
	ginkgo.GinkgoHelper()
	s, err := spec.Parse(raw)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	img, err := Builder.Ensure(ctx, s)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	return img
}

// Verdict runs one suite on one build, as `harp run` would, with
// parameters NAME=VALUE.
func Verdict(ctx context.Context, s *suite.Suite, img *images.Image, params ...string) report.Result {
	ginkgo.GinkgoHelper()
	given, err := suite.ParseParams(params)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	gomega.Expect(suite.CheckParams([]*suite.Suite{s}, given)).To(gomega.Succeed())
	r := (&runner.Runner{Docker: Docker, Builder: Builder, RunID: RunID, Params: given}).RunOne(ctx, s, img)
	ginkgo.AddReportEntry(r.Line())
	ginkgo.GinkgoWriter.Println(r.Line())
	return r
}

// Root is the repository root.
func Root() string {
	dir, _ := os.Getwd()
	for d := dir; d != filepath.Dir(d); d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
	}
	return dir
}

// Fix is the path of a patch under fixtures/patches.
func Fix(name string) string { return filepath.Join(Root(), "fixtures", "patches", name) }

// Harp runs the harp command (built once) in a temporary directory, with
// more environment variables.
func Harp(env []string, args ...string) *gexec.Session {
	ginkgo.GinkgoHelper()
	harpOnce.Do(func() {
		rev, _ := exec.Command("git", "-C", Root(), "rev-parse", "--short=12", "HEAD").Output()
		harpBin, harpErr = gexec.Build("github.com/harp-project/harp/cmd/harp", "-ldflags", "-X main.commit="+strings.TrimSpace(string(rev)))
	})
	gomega.Expect(harpErr).NotTo(gomega.HaveOccurred())
	cmd := exec.Command(harpBin, args...)
	cmd.Dir = ginkgo.GinkgoT().TempDir()
	cmd.Env = append(os.Environ(), env...)
	s, err := gexec.Start(cmd, ginkgo.GinkgoWriter, ginkgo.GinkgoWriter)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	return s
}

// Build is one row of a verdict table: a build spec, the verdict it gives
// (observed, and asserted from then on), and why.
type Build struct {
	Spec string
	Want verdict.Verdict
	Why  string
}

// Release is a Debian release the self-tests run on and the version of
// HAProxy it serves: the one table every self-test's rows name.
type Release struct{ Spec, Version string }

var (
	Bookworm     = Release{"deb:bookworm", "2.6.12"}
	Trixie       = Release{"deb:trixie", "3.0.11"}
	Sid          = Release{"deb:sid", "3.2.26"}
	Experimental = Release{"deb:experimental", "3.4.7"}
	// Releases in version order.
	Releases = []Release{Bookworm, Trixie, Sid, Experimental}
)

// On is a row for a release; its why starts with the release's version.
func On(r Release, want verdict.Verdict, why string) Build {
	return Build{Spec: r.Spec, Want: want, Why: strings.TrimSpace(r.Version + " " + why)}
}

// ServedEnds are the oldest and the newest build the mirror serves, both
// giving want.
func ServedEnds(want verdict.Verdict) []Build {
	return []Build{
		{Spec: Bookworm.Spec, Want: want, Why: "the oldest build served (" + Bookworm.Version + ")"},
		{Spec: Experimental.Spec, Want: want, Why: "the newest build served (" + Experimental.Version + ")"},
	}
}

// Verdicts declares one spec per build: the suite runs there with its
// default trials and must give the verdict the row says, after which
// check (if any) asserts the counts and evidence.
func Verdicts(s *suite.Suite, check func(r report.Result), builds ...Build) bool {
	var entries []any
	for _, b := range builds {
		entries = append(entries, ginkgo.Entry(b.Why+" ("+b.Spec+")", b.Spec, b.Want, ginkgo.SpecTimeout(10*time.Minute)))
	}
	body := func(ctx ginkgo.SpecContext, build string, want verdict.Verdict) {
		r := Verdict(ctx, s, Image(ctx, build))
		gomega.Expect(r.Verdict).To(gomega.Equal(want), r.Line())
		gomega.Expect(r.TrialsRun).To(gomega.Equal(s.Trials), r.Line())
		if check != nil {
			check(r)
		}
	}
	return ginkgo.DescribeTable("the verdict each real build gives", append([]any{body}, entries...)...)
}

// VerdictsTogether is Verdicts for suites that mostly wait (on resyncs,
// expiries, reconnects): one spec builds every image first, then runs the
// suite on all builds at the same time, and asserts each row. params are
// NAME=VALUE for every build; a Build whose Spec carries " | NAME=VALUE"
// after it gets those too (e.g. a shorter bound for a mutant that never
// converges).
func VerdictsTogether(s *suite.Suite, check func(b Build, r report.Result), builds ...Build) bool {
	return ginkgo.It(fmt.Sprintf("gives the verdict each of %d real builds should, run side by side", len(builds)), func(ctx ginkgo.SpecContext) {
		imgs := make([]*images.Image, len(builds))
		params := make([][]string, len(builds))
		for i, b := range builds {
			raw, extra, _ := strings.Cut(b.Spec, " | ")
			imgs[i] = Image(ctx, raw)
			params[i] = strings.Fields(extra)
		}
		results := make([]report.Result, len(builds))
		runners := make([]*runner.Runner, len(builds))
		for i := range builds {
			given, err := suite.ParseParams(params[i])
			gomega.Expect(err).NotTo(gomega.HaveOccurred())
			gomega.Expect(suite.CheckParams([]*suite.Suite{s}, given)).To(gomega.Succeed())
			runners[i] = &runner.Runner{Docker: Docker, Builder: Builder, RunID: RunID, Params: given}
		}
		var wg sync.WaitGroup
		for i := range builds {
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[i] = runners[i].RunOne(ctx, s, imgs[i])
			}()
		}
		wg.Wait()
		for i, b := range builds {
			r := results[i]
			if r.Verdict == verdict.Inconclusive && b.Want != verdict.Inconclusive {
				// Side by side on a small machine, harp may be too slow to
				// judge (its own reason says so, never a verdict): the
				// build runs again alone, and that run must give the truth.
				ginkgo.GinkgoWriter.Printf("%s: INCONCLUSIVE beside %d other builds; once more alone: %s\n", b.Spec, len(builds)-1, r.Line())
				r = runners[i].RunOne(ctx, s, imgs[i])
			}
			ginkgo.AddReportEntry(r.Line())
			ginkgo.GinkgoWriter.Println(r.Line())
			gomega.Expect(r.Verdict).To(gomega.Equal(b.Want), "%s (%s): %s", b.Why, b.Spec, r.Line())
			if r.Verdict != verdict.Reproduced { // a suite may stop once HAProxy is gone
				gomega.Expect(r.TrialsRun).To(gomega.Equal(s.Trials), r.Line())
			}
			if check != nil {
				check(b, r)
			}
		}
	}, ginkgo.SpecTimeout(15*time.Minute))
}

// Mutant is the path of a mutant patch under fixtures/patches/mutants.
func Mutant(name string) string { return filepath.Join(Root(), "fixtures", "patches", "mutants", name) }

// Orig is the path of the upstream tarball Debian serves for version.
func Orig(ctx context.Context, version string) string {
	ginkgo.GinkgoHelper()
	m, err := Builder.Mirror(ctx)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	b, err := m.Resolve(ctx, version)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	orig, err := m.FetchOrig(ctx, b.Version)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	return orig
}

// Repo makes a git repository of the upstream tarball of version, not yet
// committed, and a shell in it (commands fail the spec; git identity set).
func Repo(ctx context.Context, version string) (dir string, sh func(name string, args ...string) string) {
	ginkgo.GinkgoHelper()
	orig := Orig(ctx, version)
	dir = ginkgo.GinkgoT().TempDir()
	sh = func(name string, args ...string) string {
		ginkgo.GinkgoHelper()
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=harp", "GIT_AUTHOR_EMAIL=harp@example.invalid",
			"GIT_COMMITTER_NAME=harp", "GIT_COMMITTER_EMAIL=harp@example.invalid")
		out, err := cmd.CombinedOutput()
		gomega.Expect(err).NotTo(gomega.HaveOccurred(), "%s %v: %s", name, args, out)
		return strings.TrimSpace(string(out))
	}
	sh("tar", "-xf", orig, "--strip-components=1")
	sh("git", "init", "-q")
	return dir, sh
}

package suites_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/moby/moby/client"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"

	"github.com/harp-project/harp/harness/cache"
	"github.com/harp-project/harp/harness/engine"
	"github.com/harp-project/harp/harness/report"
	"github.com/harp-project/harp/harness/runner"
	"github.com/harp-project/harp/harness/scenario"
	"github.com/harp-project/harp/harness/spec"
	"github.com/harp-project/harp/images"
)

// The self-tests run real suites against real HAProxy builds and assert the
// verdicts those builds really give. Select with ginkgo labels, as users
// select suites: -ginkgo.label-filter=issue:3517.
func TestSuites(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "harp suites")
}

var (
	docker  *client.Client
	builder *images.Builder
	runID   string
	harpBin string
	// The repository root: the self-tests run from suites/.
	root, _ = filepath.Abs("..")
)

var _ = BeforeSuite(func() {
	var err error
	docker, err = engine.Connect(context.Background())
	Expect(err).NotTo(HaveOccurred())
	Expect(os.MkdirAll(cache.Dir(), 0o755)).To(Succeed())
	builder = &images.Builder{Docker: docker, Cache: cache.Dir()}
	runID = "selftest-" + report.NewID()
	harpBin, err = gexec.Build("github.com/harp-project/harp/cmd/harp")
	Expect(err).NotTo(HaveOccurred())
})

var _ = AfterSuite(func() {
	if docker != nil {
		engine.SweepRun(context.Background(), docker, runID)
	}
	gexec.CleanupBuildArtifacts()
})

// image builds (or finds) the image for a spec.
func image(ctx context.Context, raw string) *images.Image {
	GinkgoHelper()
	s, err := spec.Parse(raw)
	Expect(err).NotTo(HaveOccurred())
	img, err := builder.Ensure(ctx, s)
	Expect(err).NotTo(HaveOccurred())
	return img
}

// run runs one suite on one build, as `harp run` would.
func run(ctx context.Context, s *scenario.Scenario, img *images.Image) report.Result {
	GinkgoHelper()
	r := (&runner.Runner{Docker: docker, Builder: builder, RunID: runID}).RunOne(ctx, s, img)
	AddReportEntry(r.Line())
	GinkgoWriter.Println(r.Line())
	return r
}

func fixPatch(name string) string { return filepath.Join(root, "fixtures", "patches", name) }

// Package bench measures harp on #3517 (make bench): the cold image build,
// the warm image lookup, a bare container start, and start-to-verdict and
// per-reload times on a buggy and a fixed build, each against a baseline
// measured in the same run: the same suite code driving a local HAProxy
// process of the same binary, without a container.
package bench

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"

	"github.com/harp-project/harp/harness/cache"
	"github.com/harp-project/harp/harness/engine"
	"github.com/harp-project/harp/harness/report"
	"github.com/harp-project/harp/harness/runner"
	"github.com/harp-project/harp/harness/scenario"
	"github.com/harp-project/harp/harness/spec"
	"github.com/harp-project/harp/images"
	"github.com/harp-project/harp/suites/issue3517"
	"github.com/harp-project/harp/suites/issue3519"
)

const (
	fix     = "../fixtures/patches/3517-peers-dont-stop-per-section.diff"
	fix3519 = "../fixtures/patches/3519-peers-alive-flag-owner-only.diff"
)

func setup(b *testing.B) (context.Context, *client.Client, *images.Builder) {
	ctx := context.Background()
	docker, err := engine.Connect(ctx)
	if err != nil {
		b.Fatal(err)
	}
	os.MkdirAll(cache.Dir(), 0o755)
	return ctx, docker, &images.Builder{Docker: docker, Cache: cache.Dir()}
}

func ensure(ctx context.Context, b *testing.B, builder *images.Builder, raw string) (*images.Image, time.Duration) {
	s, err := spec.Parse(raw)
	if err != nil {
		b.Fatal(err)
	}
	t0 := time.Now()
	img, err := builder.Ensure(ctx, s)
	if err != nil {
		b.Fatal(err)
	}
	return img, time.Since(t0)
}

func perTrial(r report.Result) time.Duration {
	var sum time.Duration
	for _, t := range r.Trials {
		sum += t.Duration
	}
	if len(r.Trials) == 0 {
		return 0
	}
	return sum / time.Duration(len(r.Trials))
}

// compare runs a suite on a build in a container and as a local process,
// and reports both times, their ratio and the per-trial mean.
func compare(ctx context.Context, b *testing.B, docker *client.Client, builder *images.Builder, runID string, s *scenario.Scenario, name, raw string, say func(string, ...any)) {
	im, _ := ensure(ctx, b, builder, raw)
	r := &runner.Runner{Docker: docker, Builder: builder, RunID: runID}
	t0 := time.Now()
	inContainer := r.RunOne(ctx, s, im)
	total := time.Since(t0)
	r.Local = true
	t0 = time.Now()
	local := r.RunOne(ctx, s, im)
	base := time.Since(t0)
	if inContainer.Verdict != local.Verdict {
		b.Errorf("#%s %s: container says %s, local process says %s", s.ID, name, inContainer.Line(), local.Line())
	}
	say("#%s %s: harp %s in %.1f s (%.2f s per %s); baseline local process %s in %.1f s (%.2f s per %s); ratio %.2f, difference %.1f s",
		s.ID, name, inContainer.Verdict, total.Seconds(), perTrial(inContainer).Seconds(), strings.TrimSuffix(s.Noun, "s"),
		local.Verdict, base.Seconds(), perTrial(local).Seconds(), strings.TrimSuffix(s.Noun, "s"), total.Seconds()/base.Seconds(), (total - base).Seconds())
	b.ReportMetric(total.Seconds()/base.Seconds(), s.ID+"-"+strings.Fields(name)[0]+"-ratio")
}

func BenchmarkSuites(b *testing.B) {
	ctx, docker, builder := setup(b)
	runID := "bench-" + report.NewID()
	defer engine.SweepRun(context.Background(), docker, runID)
	var lines []string
	say := func(format string, args ...any) { lines = append(lines, fmt.Sprintf(format, args...)) }

	// Cold image build: drop the newest Debian build's image, build it again.
	img, _ := ensure(ctx, b, builder, "deb:latest")
	if _, err := docker.ImageRemove(ctx, img.Tag, client.ImageRemoveOptions{Force: true}); err != nil && !cerrdefs.IsNotFound(err) {
		b.Fatal(err)
	}
	_, cold := ensure(ctx, b, builder, "deb:latest")
	_, warm := ensure(ctx, b, builder, "deb:latest")
	say("image deb:latest (%s): cold build %.1f s, warm lookup %.3f s (%.0fx faster)", img.Version, cold.Seconds(), warm.Seconds(), cold.Seconds()/warm.Seconds())

	// A bare container start: what a container adds to any run.
	t0 := time.Now()
	c, err := testcontainers.Run(ctx, img.Tag, testcontainers.WithLabels(engine.Labels(runID)),
		testcontainers.WithEntrypoint(images.Binary), testcontainers.WithCmd("-vv"))
	if err != nil {
		b.Fatal(err)
	}
	start := time.Since(t0)
	c.Terminate(ctx)
	say("bare container start: %.2f s", start.Seconds())

	compare(ctx, b, docker, builder, runID, issue3517.Suite, "buggy (3.0.11 from source)", "src:deb:3.0.11", say)
	compare(ctx, b, docker, builder, runID, issue3517.Suite, "fixed (3.0.11 + harp's fix)", "src:deb:3.0.11,patch="+fix, say)
	compare(ctx, b, docker, builder, runID, issue3519.Suite, "buggy (3.0.11 from source)", "src:deb:3.0.11", say)
	compare(ctx, b, docker, builder, runID, issue3519.Suite, "fixed (3.0.11 + harp's fix)", "src:deb:3.0.11,patch="+fix3519, say)
	b.ReportMetric(cold.Seconds(), "cold-build-s")
	fmt.Println("\nharp benchmark (one run, baselines measured alongside):")
	for _, l := range lines {
		fmt.Println("  " + l)
	}
	fmt.Println()
}

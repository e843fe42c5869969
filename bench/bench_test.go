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
	"github.com/harp-project/harp/harness/spec"
	"github.com/harp-project/harp/images"
	"github.com/harp-project/harp/suites"
)

const fix = "../fixtures/patches/3517-peers-dont-stop-per-section.diff"

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

func perReload(r report.Result) time.Duration {
	var sum time.Duration
	for _, t := range r.Trials {
		sum += t.Duration
	}
	if len(r.Trials) == 0 {
		return 0
	}
	return sum / time.Duration(len(r.Trials))
}

func BenchmarkIssue3517(b *testing.B) {
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

	for _, build := range []struct{ name, spec string }{
		{"buggy (3.0.11 from source)", "src:deb:3.0.11"},
		{"fixed (3.0.11 + harp's fix)", "src:deb:3.0.11,patch=" + fix},
	} {
		im, _ := ensure(ctx, b, builder, build.spec)
		r := &runner.Runner{Docker: docker, Builder: builder, RunID: runID}
		t0 := time.Now()
		inContainer := r.RunOne(ctx, suites.Issue3517, im)
		total := time.Since(t0)
		r.Local = true
		t0 = time.Now()
		local := r.RunOne(ctx, suites.Issue3517, im)
		base := time.Since(t0)
		if inContainer.Verdict != local.Verdict {
			b.Errorf("%s: container says %s, local process says %s", build.name, inContainer.Line(), local.Line())
		}
		say("%s: harp %s in %.1f s (%.2f s per reload); baseline local process %s in %.1f s (%.2f s per reload); ratio %.2f, difference %.1f s (bare container start %.1f s)",
			build.name, inContainer.Verdict, total.Seconds(), perReload(inContainer).Seconds(),
			local.Verdict, base.Seconds(), perReload(local).Seconds(), total.Seconds()/base.Seconds(), (total - base).Seconds(), start.Seconds())
		b.ReportMetric(total.Seconds(), strings.Fields(build.name)[0]+"-s")
		b.ReportMetric(total.Seconds()/base.Seconds(), strings.Fields(build.name)[0]+"-ratio")
	}
	b.ReportMetric(cold.Seconds(), "cold-build-s")
	fmt.Println("\n#3517 benchmark (one run, baselines measured alongside):")
	for _, l := range lines {
		fmt.Println("  " + l)
	}
	fmt.Println()
}

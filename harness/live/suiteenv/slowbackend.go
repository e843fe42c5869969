package suiteenv

import (
	"context"
	"fmt"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/testcontainers/testcontainers-go"
	tcnetwork "github.com/testcontainers/testcontainers-go/network"
	"github.com/testcontainers/testcontainers-go/wait"

	"github.com/harp-project/harp/harness/live/engine"
	"github.com/harp-project/harp/images"
)

// StartSlowBackend starts harp's slow backend (service: its time per
// request, one request at a time) on CPUs cpuset, on a network of the
// run's own where it is "backend"; both are removed when the run ends.
// Nodes reach it when started with Options.Network set to the network.
func (env *Env) StartSlowBackend(ctx context.Context, service time.Duration, cpuset string) (*testcontainers.DockerNetwork, error) {
	nw, err := tcnetwork.New(ctx, tcnetwork.WithLabels(engine.Labels(env.RunID)))
	if err != nil {
		return nil, fmt.Errorf("creating a network: %w", err)
	}
	env.Cleanup(func(ctx context.Context) { nw.Remove(ctx) })
	tag, err := env.Builder.SlowHTTPImage(ctx)
	if err != nil {
		return nil, err
	}
	be, err := testcontainers.Run(ctx, tag, tcnetwork.WithNetwork([]string{"backend"}, nw),
		testcontainers.WithLabels(engine.Labels(env.RunID)),
		testcontainers.WithEntrypoint(images.SlowHTTPBinary), testcontainers.WithCmd("-service", service.String()),
		testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) { hc.CpusetCpus = cpuset }),
		testcontainers.WithWaitStrategy(wait.ForLog("slowbackend on").WithStartupTimeout(30*time.Second)))
	if be != nil {
		env.Cleanup(func(ctx context.Context) { be.Terminate(ctx) })
	}
	if err != nil {
		return nil, fmt.Errorf("starting the slow backend: %w", err)
	}
	return nw, nil
}

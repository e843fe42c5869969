// Package engine connects to the local Docker engine and owns the labels
// that mark everything harp creates, so a sweep can find what a killed run
// left behind.
package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"

	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"

	"github.com/harp-project/harp/harness/live/owner"
)

// Labels on every container, network and image harp creates.
const (
	LabelHarp = "harp"     // always "1"
	LabelRun  = "harp.run" // the run id
	LabelPID  = "harp.pid" // pid of the harp process that owns it
	// LabelPIDNS names the owner's pid namespace: a pid means something
	// only there (harp may run in a container beside another harp).
	LabelPIDNS = "harp.pidns"
	// LabelOwner is the owner's pid and start time (owner.ID): a reused
	// pid is not the owner.
	LabelOwner = "harp.owner"
)

// Labels returns the labels for an object owned by this process and run.
func Labels(runID string) map[string]string {
	return map[string]string{LabelHarp: "1", LabelRun: runID, LabelPID: strconv.Itoa(os.Getpid()), LabelPIDNS: owner.NS(), LabelOwner: owner.ID()}
}

// Connect returns a client for the local Docker engine, or an error that
// says plainly that Docker is not reachable.
func Connect(ctx context.Context) (*client.Client, error) {
	// Ryuk's image cannot be pulled here (no registry); harp sweeps its own.
	if os.Getenv("TESTCONTAINERS_RYUK_DISABLED") == "" {
		os.Setenv("TESTCONTAINERS_RYUK_DISABLED", "true")
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if host := os.Getenv("DOCKER_HOST"); host != "" {
		// testcontainers would quietly fall back to another engine when
		// DOCKER_HOST does not answer; a user who names one means that one.
		direct, err := client.New(client.FromEnv, client.WithAPIVersionNegotiation())
		if err == nil {
			_, err = direct.Ping(ctx, client.PingOptions{})
			direct.Close()
		}
		if err != nil {
			return nil, fmt.Errorf("Docker is not reachable at DOCKER_HOST=%s: %w", host, err)
		}
	}
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return nil, fmt.Errorf("Docker is not reachable (DOCKER_HOST=%q): %w", os.Getenv("DOCKER_HOST"), err)
	}
	if _, err := cli.Ping(ctx, client.PingOptions{}); err != nil {
		return nil, fmt.Errorf("Docker is not reachable (DOCKER_HOST=%q): %w", os.Getenv("DOCKER_HOST"), err)
	}
	return cli.Client, nil
}

// Sweep removes harp containers and networks whose owning process is gone
// (or all of them, with all=true). It returns how many it removed.
//
// A killed owner may have left a removal half done (Docker refuses a second
// one while it runs) or a create the engine finishes after the owner died:
// Sweep lists again until none is left, within sweepPatience.
func Sweep(ctx context.Context, cli *client.Client, all bool) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, sweepPatience)
	defer cancel()
	return sweepUntilGone(ctx, cli, client.Filters{}.Add("label", LabelHarp+"=1"), all, "harp containers of dead runs")
}

// sweepPatience bounds how long a sweep waits for Docker to finish what a
// dead owner began.
const sweepPatience = 30 * time.Second

// SweepRun removes every container and network of one run.
func SweepRun(ctx context.Context, cli *client.Client, runID string) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, 4*sweepPatience) // a run may own dozens
	defer cancel()
	return sweepUntilGone(ctx, cli, client.Filters{}.Add("label", LabelRun+"="+runID), true, "containers of run "+runID)
}

// sweepUntilGone sweeps until a listing shows none of what it sweeps, within
// ctx: a container whose create was cut short by an interrupt, or that
// another removal holds, may show up or stay a moment.
func sweepUntilGone(ctx context.Context, cli *client.Client, f client.Filters, all bool, what string) (int, error) {
	n, err := sweep(ctx, cli, f, all)
	for err == nil {
		left, lerr := remaining(ctx, cli, f, all)
		if lerr != nil || left == 0 {
			return n, lerr
		}
		select {
		case <-ctx.Done():
			return n, fmt.Errorf("%s: %d still listed: %w", what, left, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
		var more int
		more, err = sweep(ctx, cli, f, all)
		n += more
	}
	return n, err
}

// remaining counts the containers and networks a sweep would remove.
func remaining(ctx context.Context, cli *client.Client, f client.Filters, all bool) (int, error) {
	cs, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	if err != nil {
		return 0, fmt.Errorf("listing harp containers: %w", err)
	}
	ns, err := cli.NetworkList(ctx, client.NetworkListOptions{Filters: f})
	if err != nil {
		return 0, fmt.Errorf("listing harp networks: %w", err)
	}
	left := 0
	for _, c := range cs.Items {
		if all || !ownerAlive(c.Labels) {
			left++
		}
	}
	for _, nw := range ns.Items {
		if all || !ownerAlive(nw.Labels) {
			left++
		}
	}
	return left, nil
}

func sweep(ctx context.Context, cli *client.Client, f client.Filters, all bool) (int, error) {
	n := 0
	cs, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	if err != nil {
		return 0, fmt.Errorf("listing harp containers: %w", err)
	}
	for _, c := range cs.Items {
		if !all && ownerAlive(c.Labels) {
			continue
		}
		if _, err := cli.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true}); err == nil {
			n++
		}
	}
	ns, err := cli.NetworkList(ctx, client.NetworkListOptions{Filters: f})
	if err != nil {
		return n, fmt.Errorf("listing harp networks: %w", err)
	}
	for _, nw := range ns.Items {
		if !all && ownerAlive(nw.Labels) {
			continue
		}
		if _, err := cli.NetworkRemove(ctx, nw.ID, client.NetworkRemoveOptions{}); err == nil {
			n++
		}
	}
	return n, nil
}

// ownerAlive says whether the harp process that owns an object may still
// run. Owners in another pid namespace cannot be checked: they count as
// alive. A pid that cannot be signalled for lack of permission is alive.
func ownerAlive(labels map[string]string) bool {
	if labels[LabelPIDNS] != owner.NS() {
		return true
	}
	if id := labels[LabelOwner]; id != "" {
		return owner.Alive(id)
	}
	p, err := strconv.Atoi(labels[LabelPID])
	if err != nil || p <= 0 {
		return false
	}
	if p == os.Getpid() {
		return true
	}
	err = syscall.Kill(p, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

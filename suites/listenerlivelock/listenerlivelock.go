// Package listenerlivelock encodes "listener: dequeue_proxy_listeners()
// livelocks at maxconn with many thread groups".
package listenerlivelock

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/testcontainers/testcontainers-go"
	tcnetwork "github.com/testcontainers/testcontainers-go/network"
	"github.com/testcontainers/testcontainers-go/wait"

	"github.com/harp-project/harp/harness/cliout"
	"github.com/harp-project/harp/harness/config"
	"github.com/harp-project/harp/harness/cpus"
	"github.com/harp-project/harp/harness/engine"
	"github.com/harp-project/harp/harness/load"
	"github.com/harp-project/harp/harness/node"
	"github.com/harp-project/harp/harness/scenario"
	"github.com/harp-project/harp/harness/verdict"
	"github.com/harp-project/harp/images"
	"github.com/harp-project/harp/suites/listenerlivelock/judge"
)

// At the frontend's (or the process's)
// connection limit, with slots freed slowly by a slow backend and several
// listeners served by different threads, a thread releasing a connection
// loops re-enabling listeners that re-queue themselves at once, holding the
// proxy lock: watchdog warnings, sometimes a panic and exit code 134.
var Suite = scenario.Register(&scenario.Scenario{
	ID:       "listener-livelock",
	Upstream: "haproxy listener livelock at maxconn (dequeue_proxy_listeners)",
	Title:    "listener: dequeue_proxy_listeners() livelocks at maxconn with many thread groups",
	Summary:  "vegeta load on a frontend at its maxconn in front of harp's slow backend, several listeners on different threads: no watchdog stall over 100 ms, no panic, no exit",
	Labels:   []string{"area:listeners", "slow"},
	Params: []scenario.Param{
		scenario.Int("THREADS", 16, 1, 1024, "nbthread"),
		scenario.Text("GROUPS", "", "thread-groups (default: THREADS with LAYOUT=groups, else 1)", positive),
		scenario.OneOf("LAYOUT", "groups", "listeners: one per thread group, shards by-thread, or one bind per thread", "groups", "shards", "binds"),
		scenario.OneOf("VARIANT", "frontend", "whose maxconn is reached: the frontend's, or the process's (half of it)", "frontend", "process"),
		scenario.Int("MAXCONN", 4000, 1, 1000000, "the frontend's maxconn"),
		scenario.Int("RATE", 1000, 1, 100000, "vegeta requests per second"),
		scenario.Duration("DURATION", 15*time.Second, "how long vegeta attacks"),
		scenario.Duration("TIMEOUT", 30*time.Second, "vegeta's timeout per request"),
		scenario.Text("CPUSET", "", "CPUs HAProxy is pinned to (e.g. 0-3; default the first THREADS); the others serve harp's load and backend", cpusetOK),
		scenario.Duration("SERVICE", 100*time.Millisecond, "the slow backend's time per request"),
	},
	Trials: 1,
	Noun:   "runs",
	Steps: []string{
		"Setup: harp's slow backend (100 ms per request, one at a time: about 10 requests/s) on a harp network; one node with nbthread N and thread-groups G, a frontend with its maxconn (variant frontend, default 4000) or a global maxconn below it (variant process, 2000 under 4000), and several listeners served by different threads (layout groups: one bind per thread group; shards: bind ... shards by-thread; binds: one bind ... thread N per thread).",
		"Preconditions: the container has at least as many CPUs as threads; the listeners, threads and groups are what the config asks; during the attack the frontend (or the process) really reached its limit (show stat / show info sampled every 250 ms).",
		"Trigger: vegeta load from the test process (default 1000 requests/s for 15 s, 30 s timeout).",
		"Expectation: at maxconn new connections wait in the accept queue and releasing a connection takes microseconds: no watchdog warning over 100 ms, no panic, no worker or master exit.",
	},
	Run: runLivelock,
})

// ParamsOf reads the run's parameters (defaults where none were given).
func ParamsOf(v scenario.Values) judge.Params {
	p := judge.Params{
		Threads: v.Int("THREADS"), Layout: v.String("LAYOUT"), Variant: v.String("VARIANT"), CPUSet: v.String("CPUSET"),
		Rate: v.Int("RATE"), Duration: v.Duration("DURATION"), FrontendMaxconn: v.Int("MAXCONN"),
		Service: v.Duration("SERVICE"), Timeout: v.Duration("TIMEOUT"),
	}
	p.Groups = v.Int("GROUPS")
	if p.Groups == 0 && p.Layout == "groups" {
		p.Groups = p.Threads
	} else if p.Groups == 0 {
		p.Groups = 1
	}
	if p.Variant == "process" {
		p.ProcessM = p.FrontendMaxconn / 2
	}
	p.ControlMaxconn = max(4*p.FrontendMaxconn, 2*p.Rate*int((p.Duration+p.Timeout).Seconds()))
	if p.CPUSet != "" {
		p.HAProxyCPUs, _ = cpus.Parse(p.CPUSet)
	} else {
		all := cpus.All()
		p.HAProxyCPUs = all[:min(p.Threads, len(all))]
	}
	p.LoadCPUs = cpus.Without(cpus.All(), p.HAProxyCPUs)
	return p
}

// machineUnmet says why this machine cannot show the livelock: fewer CPUs
// for HAProxy than threads, or none left for the load generator, whose
// own CPU starvation would otherwise look like HAProxy's stall.
func machineUnmet(p judge.Params) string {
	switch {
	case len(cpus.Without(p.HAProxyCPUs, cpus.All())) > 0:
		return fmt.Sprintf("CPUSET=%s names CPUs this machine does not have or harp may not use (it may use %s)", p.CPUSet, cpus.Format(cpus.All()))
	case len(p.HAProxyCPUs) < p.Threads:
		return fmt.Sprintf("%d CPUs < %d threads: this machine cannot show the livelock; run with THREADS=%d or on a larger machine", len(p.HAProxyCPUs), p.Threads, len(p.HAProxyCPUs))
	case len(p.LoadCPUs) == 0:
		return fmt.Sprintf("no CPU headroom for the load generator: HAProxy's %d threads take all %d CPUs (run on a machine with more CPUs than THREADS)", p.Threads, runtime.NumCPU())
	}
	return ""
}

func positive(v string) error {
	if n, err := strconv.Atoi(v); err != nil || n < 1 {
		return fmt.Errorf("want a whole number of 1 or more")
	}
	return nil
}

func cpusetOK(v string) error {
	_, err := cpus.Parse(v)
	return err
}

// Config renders the node's configuration.
func Config(p judge.Params) (string, error) {
	var groups, threads []int
	for i := 1; i <= p.Groups; i++ {
		groups = append(groups, i)
	}
	for i := 1; i <= p.Threads; i++ {
		threads = append(threads, i)
	}
	return config.Render("livelock.cfg.tmpl", map[string]any{
		"Threads": p.Threads, "Groups": p.Groups, "ProcessMaxconn": p.ControlMaxconn, "FrontendMaxconn": p.FrontendMaxconn,
		"Layout": p.Layout, "GroupList": groups, "ThreadList": threads, "Backend": "backend:8080", "BackendMaxconn": 1,
	})
}

func runLivelock(ctx context.Context, env *scenario.Env) verdict.Outcome {
	p := ParamsOf(env.Params)
	cfg, err := Config(p)
	env.Config = cfg
	if err != nil {
		return verdict.Outcome{Err: err}
	}
	// Preconditions of the machine and the layout: without them no stall
	// means anything, and on 2 CPUs no run can say REPRODUCED.
	if u := machineUnmet(p); u != "" {
		return verdict.Outcome{Unmet: u}
	}
	if u := p.LayoutUnmet(); u != "" {
		return verdict.Outcome{Unmet: u}
	}
	if env.Docker == nil {
		return verdict.Outcome{Err: fmt.Errorf("the listener suite needs Docker (a backend container and a network)")}
	}
	nw, err := startBackend(ctx, env, p)
	if err != nil {
		return verdict.Outcome{Err: err}
	}
	n, _, err := env.StartNode(ctx, node.Options{Config: cfg, Ports: []string{"8080/tcp"}, Network: nw, CPUSet: cpus.Format(p.HAProxyCPUs)}, 0)
	if err != nil {
		if a := layoutRefused(err.Error()); a != "" {
			return verdict.Outcome{Unmet: "this build does not accept the layout's configuration: " + a}
		}
		return verdict.Outcome{Err: err}
	}
	return env.RunTrials(ctx, func(ctx context.Context, t *verdict.Trial) error {
		f, err := attack(ctx, env, n, p, t)
		t.Violation, t.Unmet, t.Remark = judge.Attack(f)
		return err
	})
}

// startBackend starts harp's slow backend on a network of the run's own,
// reachable there as "backend"; both are removed when the run ends.
func startBackend(ctx context.Context, env *scenario.Env, p judge.Params) (*testcontainers.DockerNetwork, error) {
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
		testcontainers.WithEntrypoint(images.SlowHTTPBinary), testcontainers.WithCmd("-service", p.Service.String()),
		testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) { hc.CpusetCpus = cpus.Format(p.LoadCPUs) }),
		testcontainers.WithWaitStrategy(wait.ForLog("slowbackend on").WithStartupTimeout(30*time.Second)))
	if be != nil {
		env.Cleanup(func(ctx context.Context) { be.Terminate(ctx) })
	}
	if err != nil {
		return nil, fmt.Errorf("starting the slow backend: %w", err)
	}
	return nw, nil
}

// layoutRefused is the config parser's alert refusing the layout's
// keywords (a build without thread groups), "" for any other start
// failure: a build that crashes or fails otherwise while its log merely
// mentions thread-groups is no build that lacks them.
func layoutRefused(startErr string) string {
	for _, l := range strings.Split(startErr, "\n") {
		if strings.Contains(l, "ALERT") && strings.Contains(l, "parsing") &&
			(strings.Contains(l, "unknown keyword") || strings.Contains(l, "thread-group")) {
			return strings.TrimSpace(l)
		}
	}
	return ""
}

// attack checks the layout the worker runs, runs the control (the same
// load with limits it never reaches), then the attack against the real
// limit, each sampled, and reads the logs for stalls, panics and exits.
func attack(ctx context.Context, env *scenario.Env, n *node.Node, p judge.Params, t *verdict.Trial) (f judge.Facts, err error) {
	f.Params = p
	t.Evidence = &f
	pid, err := n.CurrentWorker(ctx)
	if err != nil {
		return f, err
	}
	info, err := n.Info(ctx, pid)
	if err != nil {
		return f, err
	}
	rows, err := n.Stat(ctx, pid)
	if err != nil {
		return f, err
	}
	threads, err := n.Query(ctx, pid, "show threads")
	if err != nil {
		return f, err
	}
	f.Version, f.Threads, f.Groups, f.Listeners = info["Version"], info.Int("Nbthread"), cliout.ThreadGroups(threads), cliout.Listeners(rows, "fe")
	t.Notef("%d threads, %d thread groups, %d listeners; HAProxy on CPUs %s, load and backend on CPUs %s", f.Threads, f.Groups, f.Listeners, cpus.Format(p.HAProxyCPUs), cpus.Format(p.LoadCPUs))
	if judge.WorkerUnmet(f) != "" {
		return f, nil
	}
	addr, err := n.Addr(ctx, "8080/tcp")
	if err != nil {
		return f, err
	}
	lr := &loadRun{env: env, n: n, pid: pid, p: p, url: "http://" + addr + "/"}
	if err := lr.limits(ctx, p.ControlMaxconn, 0); err != nil {
		return f, err
	}
	if f.Control, err = lr.round(ctx, "control"); err != nil {
		return f, err
	}
	t.Notef("control (limits %d, never reached): %s", p.ControlMaxconn, f.Control)
	if err := lr.drain(ctx); err != nil {
		// HAProxy keeping the control's connections is no harness error:
		// the attack would not start from an idle process, so it says
		// nothing either way.
		f.Undrained = err.Error()
		return f, nil
	}
	if err := lr.limits(ctx, p.FrontendMaxconn, p.ProcessM); err != nil {
		return f, err
	}
	if f.Attack, err = lr.round(ctx, "attack"); err != nil {
		return f, err
	}
	t.Notef("attack: %s", f.Attack)
	return f, nil
}

// loadRun runs vegeta rounds against one node from the load CPUs.
type loadRun struct {
	env *scenario.Env
	n   *node.Node
	pid int
	p   judge.Params
	url string
}

// limits sets the frontend's maxconn, and the process's when given.
func (lr *loadRun) limits(ctx context.Context, frontend, process int) error {
	if err := lr.n.Silent(ctx, lr.pid, fmt.Sprintf("set maxconn frontend fe %d", frontend)); err != nil {
		return err
	}
	if process > 0 {
		return lr.n.Silent(ctx, lr.pid, fmt.Sprintf("set maxconn global %d", process))
	}
	return nil
}

// round attacks with vegeta pinned to the load CPUs while sampling the
// limits, and collects the stalls logged meanwhile.
func (lr *loadRun) round(ctx context.Context, what string) (r judge.Round, err error) {
	logs, err := lr.n.Logs(ctx)
	if err != nil {
		return r, err
	}
	// What the log held before this round is not this round's.
	before := len(logs)
	restore, err := cpus.Pin(lr.p.LoadCPUs)
	if err != nil {
		return r, err
	}
	stop := sample(ctx, lr.n, lr.pid)
	lr.env.Logf("listener livelock on %s: %s, %d requests/s for %s against %s", lr.env.Image.Name, what, lr.p.Rate, lr.p.Duration, lr.url)
	r.Load, err = load.Attack(ctx, load.Options{URL: lr.url, Rate: lr.p.Rate, Duration: lr.p.Duration, Timeout: lr.p.Timeout,
		Progress: func(done uint64, el time.Duration) {
			if int(el.Seconds())%5 == 0 {
				lr.env.Logf("  %s %s: %d responses so far", what, el.Round(time.Second), done)
			}
		}})
	r.Peaks, r.Ran = stop(), true
	restore()
	if err != nil {
		return r, err
	}
	if logs, err = lr.n.Logs(ctx); err != nil {
		return r, err
	}
	during := logs[min(before, len(logs)):]
	r.Stalls, r.Panics = cliout.ParseStalls(during), cliout.ParsePanics(during)
	r.WorkerExits = cliout.FailedExits(cliout.ParseWorkerExits(during))
	r.MasterCode, r.MasterExited = cliout.MasterExit(during)
	return r, nil
}

// drain waits until the control's connections are gone, so the attack
// starts from an idle process.
func (lr *loadRun) drain(ctx context.Context) error {
	var cur int64
	err := node.Poll(ctx, lr.p.Timeout+30*time.Second, 250*time.Millisecond, func() (bool, error) {
		info, err := lr.n.Info(ctx, lr.pid)
		if err != nil {
			return false, nil
		}
		cur = info.Int("CurrConns")
		return cur <= 1, nil
	})
	if err != nil {
		return fmt.Errorf("the control's %d connections never drained: %w", cur, err)
	}
	return nil
}

// sample polls the frontend's and the process's connections every 250 ms
// until stop is called, which returns the peaks.
func sample(ctx context.Context, n *node.Node, pid int) (stop func() judge.Peaks) {
	var mu sync.Mutex
	var pk judge.Peaks
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tk := time.NewTicker(250 * time.Millisecond)
		defer tk.Stop()
		for {
			select {
			case <-sctx.Done():
				return
			case <-tk.C:
			}
			if rows, err := n.Stat(sctx, pid); err == nil {
				if fe, ok := cliout.FindStat(rows, "fe", "FRONTEND"); ok {
					mu.Lock()
					pk.Frontend, pk.FrontendLimit = max(pk.Frontend, fe.Int("scur")), fe.Int("slim")
					mu.Unlock()
				}
			}
			if info, err := n.Info(sctx, pid); err == nil {
				mu.Lock()
				pk.Process, pk.ProcessLimit = max(pk.Process, info.Int("CurrConns")), info.Int("Maxconn")
				mu.Unlock()
			}
		}
	}()
	return func() judge.Peaks {
		cancel()
		<-done
		mu.Lock()
		defer mu.Unlock()
		return pk
	}
}

// Package listenerlivelock encodes "listener: dequeue_proxy_listeners()
// livelocks at maxconn with many thread groups".
package listenerlivelock

import (
	_ "embed"

	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/harp-project/harp/harness/core/cliout"
	"github.com/harp-project/harp/harness/core/config"
	"github.com/harp-project/harp/harness/core/suite"
	"github.com/harp-project/harp/harness/core/verdict"
	"github.com/harp-project/harp/harness/live/cpus"
	"github.com/harp-project/harp/harness/live/load"
	"github.com/harp-project/harp/harness/live/node"
	"github.com/harp-project/harp/harness/live/suiteenv"
	"github.com/harp-project/harp/suites/listenerlivelock/judge"
)

// configTemplate is the suite's config, next to it (listener-livelock.cfg.tmpl); the shared
// blocks (the global section) come from fixtures/templates.
//
//go:embed listener-livelock.cfg.tmpl
var configTemplate string

// At the frontend's (or the process's) connection limit, with slots freed
// slowly by a slow backend and several listeners served by different
// threads, a thread releasing a connection loops re-enabling listeners that
// re-queue themselves at once, holding the proxy lock: watchdog warnings,
// sometimes a panic and exit code 134.
var Suite = suite.Register(&suite.Suite{
	ID:       "listener-livelock",
	Upstream: "haproxy listener livelock at maxconn (dequeue_proxy_listeners)",
	Title:    "listener: dequeue_proxy_listeners() livelocks at maxconn with many thread groups",
	Summary:  "vegeta load on a frontend at its maxconn in front of harp's slow backend, several listeners on different threads: no watchdog stall over 100 ms, no panic, no exit",
	Labels:   []string{"area:listeners", "slow"},
	Params: []suite.Param{
		suite.Int("THREADS", 16, 1, 1024, "nbthread"),
		suite.Text("GROUPS", "", "thread-groups (default: THREADS with LAYOUT=groups, else 1)", suite.Positive),
		suite.OneOf("LAYOUT", "groups", "listeners: one per thread group, shards by-thread, or one bind per thread", "groups", "shards", "binds"),
		suite.OneOf("VARIANT", "frontend", "whose maxconn is reached: the frontend's, or the process's (half of it)", "frontend", "process"),
		suite.Int("MAXCONN", 4000, 1, 1000000, "the frontend's maxconn"),
		suite.Int("RATE", 1000, 1, 100000, "vegeta requests per second"),
		suite.Duration("DURATION", 15*time.Second, "how long vegeta attacks"),
		suite.Duration("TIMEOUT", 30*time.Second, "vegeta's timeout per request"),
		suite.Text("CPUSET", "", "CPUs HAProxy is pinned to (e.g. 0-3; default the first THREADS); the others serve harp's load and backend", cpus.Check),
		suite.Duration("SERVICE", 100*time.Millisecond, "the slow backend's time per request"),
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
func ParamsOf(v suite.Values) judge.Params {
	p := judge.Params{
		Threads: v.Int("THREADS"), Groups: v.Int("GROUPS"), Layout: v.String("LAYOUT"), Variant: v.String("VARIANT"),
		CPUSet: v.String("CPUSET"), Rate: v.Int("RATE"), Duration: v.Duration("DURATION"), FrontendMaxconn: v.Int("MAXCONN"),
		Service: v.Duration("SERVICE"), Timeout: v.Duration("TIMEOUT"),
	}
	if p.Groups == 0 && p.Layout == "groups" {
		p.Groups = p.Threads
	} else if p.Groups == 0 {
		p.Groups = 1
	}
	if p.Variant == "process" {
		p.ProcessM = p.FrontendMaxconn / 2
	}
	p.ControlMaxconn = max(4*p.FrontendMaxconn, 2*p.Rate*int((p.Duration+p.Timeout).Seconds()))
	p.HAProxyCPUs, p.LoadCPUs = cpus.Split(p.CPUSet, p.Threads)
	return p
}

// Config renders the node's configuration.
func Config(p judge.Params) (string, error) {
	return config.RenderText("listener-livelock.cfg.tmpl", configTemplate, map[string]any{
		"Threads": p.Threads, "Groups": p.Groups, "ProcessMaxconn": p.ControlMaxconn, "FrontendMaxconn": p.FrontendMaxconn,
		"Layout": p.Layout, "GroupList": config.Seq(p.Groups), "ThreadList": config.Seq(p.Threads), "Backend": "backend:8080", "BackendMaxconn": 1,
	})
}

func runLivelock(ctx context.Context, env *suiteenv.Env) verdict.Outcome {
	p := ParamsOf(env.Params)
	cfg, err := Config(p)
	env.Config = cfg
	if err != nil {
		return verdict.Outcome{Err: err}
	}
	// Preconditions of the machine and the layout: without them no stall
	// means anything, and on 2 CPUs no run can say REPRODUCED. HAProxy needs
	// a CPU per thread, and the load generator CPUs of its own: its own
	// starvation would otherwise look like HAProxy's stall.
	if u := cmp.Or(cpus.SplitUnmet(p.CPUSet, p.HAProxyCPUs, p.LoadCPUs, p.Threads, "the livelock"), p.LayoutUnmet()); u != "" {
		return verdict.Outcome{Unmet: u}
	}
	if env.Docker == nil {
		return verdict.Outcome{Err: fmt.Errorf("the listener suite needs Docker (a backend container and a network)")}
	}
	nw, err := env.StartSlowBackend(ctx, p.Service, cpus.Format(p.LoadCPUs))
	if err != nil {
		return verdict.Outcome{Err: err}
	}
	n, _, err := env.StartNode(ctx, node.Options{Config: cfg, Ports: []string{"8080/tcp"}, Network: nw, CPUSet: cpus.Format(p.HAProxyCPUs)}, 0)
	if err != nil {
		// Only the parser's alert on the layout's keywords makes a build one
		// without thread groups, not a log that merely mentions them.
		if a := cliout.RefusedKeyword(err.Error(), "thread-group"); a != "" {
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

// attack checks the layout the worker runs, runs the control (the same
// load with limits it never reaches), then the attack against the real
// limit, each sampled, and reads the logs for stalls, panics and exits.
func attack(ctx context.Context, env *suiteenv.Env, n *node.Node, p judge.Params, t *verdict.Trial) (f judge.Facts, err error) {
	f.Params = p
	t.Evidence = &f
	pid, err := n.CurrentWorker(ctx)
	if err != nil {
		return f, err
	}
	if f.WorkerLayout, err = workerLayout(ctx, n, pid, "fe"); err != nil {
		return f, err
	}
	t.Notef("%d threads, %d thread groups, %d listeners; HAProxy on CPUs %s, load and backend on CPUs %s", f.Threads, f.Groups, f.Listeners, cpus.Format(p.HAProxyCPUs), cpus.Format(p.LoadCPUs))
	if judge.WorkerUnmet(f) != "" {
		return f, nil
	}
	addr, err := n.Addr(ctx, "8080/tcp")
	if err != nil {
		return f, err
	}
	url := "http://" + addr + "/"
	if err := setMaxconn(ctx, n, pid, "fe", p.ControlMaxconn, 0); err != nil {
		return f, err
	}
	if f.Control, err = round(ctx, env, n, pid, p, url, "control"); err != nil {
		return f, err
	}
	t.Notef("control (limits %d, never reached): %s", p.ControlMaxconn, f.Control)
	// The attack starts from an idle process: HAProxy keeping the
	// control's connections is no harness error, but then the attack
	// would say nothing either way.
	if cur, err := waitConns(ctx, n, pid, 1, p.Timeout+30*time.Second, 250*time.Millisecond); err != nil {
		f.Undrained = fmt.Sprintf("the control's %d connections never drained: %v", cur, err)
		return f, nil
	}
	if err := setMaxconn(ctx, n, pid, "fe", p.FrontendMaxconn, p.ProcessM); err != nil {
		return f, err
	}
	if f.Attack, err = round(ctx, env, n, pid, p, url, "attack"); err != nil {
		return f, err
	}
	t.Notef("attack: %s", f.Attack)
	return f, nil
}

// round attacks url with vegeta pinned to the load CPUs while sampling
// the limits, and collects the stalls logged meanwhile.
func round(ctx context.Context, env *suiteenv.Env, n *node.Node, pid int, p judge.Params, url, what string) (judge.Round, error) {
	env.Logf("listener livelock on %s: %s, %d requests/s for %s against %s", env.Image.Name, what, p.Rate, p.Duration, url)
	a, err := attackSampled(ctx, n, pid, "fe", 250*time.Millisecond, p.LoadCPUs, load.Options{URL: url, Rate: p.Rate, Duration: p.Duration, Timeout: p.Timeout,
		Progress: load.LogEvery(5, what, env.Logf)})
	return judge.Round{Ran: a.Ran, Peaks: a.Peaks, Watchdog: a.Watchdog, Load: a.Load}, err
}

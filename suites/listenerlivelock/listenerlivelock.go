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

	"github.com/testcontainers/testcontainers-go"
	tcnetwork "github.com/testcontainers/testcontainers-go/network"
	"github.com/testcontainers/testcontainers-go/wait"

	"github.com/harp-project/harp/harness/cliout"
	"github.com/harp-project/harp/harness/config"
	"github.com/harp-project/harp/harness/engine"
	"github.com/harp-project/harp/harness/load"
	"github.com/harp-project/harp/harness/node"
	"github.com/harp-project/harp/harness/scenario"
	"github.com/harp-project/harp/harness/verdict"
	"github.com/harp-project/harp/images"
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
		scenario.Text("CPUSET", "", "CPUs the node is pinned to (e.g. 0-3; default all)", cpusetOK),
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

// Params are the knobs, read from the run's parameters.
type Params struct {
	Threads, Groups           int
	Layout, Variant, CPUSet   string
	Rate                      int
	Duration                  time.Duration
	FrontendMaxconn, ProcessM int
	Service, Timeout          time.Duration
}

// ParamsOf reads the run's parameters (defaults where none were given).
func ParamsOf(v scenario.Values) Params {
	p := Params{
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
	return p
}

func positive(v string) error {
	if n, err := strconv.Atoi(v); err != nil || n < 1 {
		return fmt.Errorf("want a whole number of 1 or more")
	}
	return nil
}

func cpusetOK(v string) error {
	for _, part := range strings.Split(v, ",") {
		a, b, isRange := strings.Cut(part, "-")
		lo, err1 := strconv.Atoi(a)
		hi, err2 := lo, error(nil)
		if isRange {
			hi, err2 = strconv.Atoi(b)
		}
		if err1 != nil || err2 != nil || hi < lo || lo < 0 {
			return fmt.Errorf("want CPUs such as 0-3,6")
		}
	}
	return nil
}

// cpusFor counts the CPUs a container gets: its cpuset, else all of them.
func CPUsFor(cpuset string) int {
	if cpuset == "" {
		return runtime.NumCPU()
	}
	n := 0
	for _, part := range strings.Split(cpuset, ",") {
		a, b, isRange := strings.Cut(part, "-")
		lo, _ := strconv.Atoi(a)
		hi := lo
		if isRange {
			hi, _ = strconv.Atoi(b)
		}
		n += hi - lo + 1
	}
	return n
}

// Config renders the node's configuration.
func (p Params) Config() (string, error) {
	var groups, threads []int
	for i := 1; i <= p.Groups; i++ {
		groups = append(groups, i)
	}
	for i := 1; i <= p.Threads; i++ {
		threads = append(threads, i)
	}
	return config.Render("livelock.cfg.tmpl", map[string]any{
		"Threads": p.Threads, "Groups": p.Groups, "ProcessMaxconn": p.ProcessM, "FrontendMaxconn": p.FrontendMaxconn,
		"Layout": p.Layout, "GroupList": groups, "ThreadList": threads, "Backend": "backend:8080", "BackendMaxconn": 1,
	})
}

// wantListeners is how many listeners the layout gives the frontend.
func (p Params) wantListeners() int {
	switch p.Layout {
	case "groups":
		return p.Groups
	case "shards":
		return p.Threads
	}
	return p.Threads
}

func runLivelock(ctx context.Context, env *scenario.Env) verdict.Outcome {
	p := ParamsOf(env.Params)
	cfg, err := p.Config()
	env.Config = cfg
	if err != nil {
		return verdict.Outcome{Err: err}
	}
	// Precondition: a thread per CPU at least, or stalls mean nothing.
	if cpus := CPUsFor(p.CPUSet); cpus < p.Threads {
		return verdict.Outcome{Unmet: fmt.Sprintf("%d CPUs < %d threads: this machine cannot show the livelock; run with THREADS=%d or on a larger machine", cpus, p.Threads, cpus)}
	}
	if env.Docker == nil {
		return verdict.Outcome{Err: fmt.Errorf("the listener suite needs Docker (a backend container and a network)")}
	}
	nw, err := startBackend(ctx, env, p.Service)
	if err != nil {
		return verdict.Outcome{Err: err}
	}
	n, _, err := env.StartNode(ctx, node.Options{Config: cfg, Ports: []string{"8080/tcp"}, Network: nw, CPUSet: p.CPUSet}, 0)
	if err != nil {
		if strings.Contains(err.Error(), "unknown keyword") || strings.Contains(err.Error(), "thread-groups") {
			return verdict.Outcome{Unmet: "this build does not accept the layout's configuration: " + firstLineOf(err.Error())}
		}
		return verdict.Outcome{Err: err}
	}
	return env.RunTrials(ctx, func(ctx context.Context, t *scenario.Trial) error {
		f, err := attack(ctx, env, n, p, t)
		t.Violation, t.Unmet, t.Remark = Judge(f)
		return err
	})
}

// startBackend starts harp's slow backend on a network of the run's own,
// reachable there as "backend"; both are removed when the run ends.
func startBackend(ctx context.Context, env *scenario.Env, service time.Duration) (*testcontainers.DockerNetwork, error) {
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
		testcontainers.WithWaitStrategy(wait.ForLog("slowbackend on").WithStartupTimeout(30*time.Second)))
	if be != nil {
		env.Cleanup(func(ctx context.Context) { be.Terminate(ctx) })
	}
	if err != nil {
		return nil, fmt.Errorf("starting the slow backend: %w", err)
	}
	return nw, nil
}

func firstLineOf(s string) string { l, _, _ := strings.Cut(s, "\n"); return l }

// Facts are what one attack observed; Judge decides from them alone.
type Facts struct {
	Params       Params
	Version      string
	Threads      int64 // from show info
	Groups       int   // from show threads
	Listeners    int   // the frontend's, from show stat
	Peaks        Peaks `json:"peaks"`
	Stalls       []cliout.Stall
	Panics       []cliout.Panic
	WorkerExits  []string // exits with a non-zero code
	MasterExited bool
	MasterCode   int
	Load         load.Result
	Attacked     bool // the load ran (else only the layout was checked)
}

// Peaks are the highest connection counts sampled during the attack.
type Peaks struct {
	Frontend, FrontendLimit, Process, ProcessLimit int64
}

// attack checks the layout the worker runs, attacks it while sampling its
// limits, and reads the logs for stalls, panics and exits.
func attack(ctx context.Context, env *scenario.Env, n *node.Node, p Params, t *scenario.Trial) (f Facts, err error) {
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
	t.Notef("%d threads, %d thread groups, %d listeners, %d CPUs", f.Threads, f.Groups, f.Listeners, CPUsFor(p.CPUSet))
	if layoutUnmet(f) != "" {
		return f, nil
	}
	addr, err := n.Addr(ctx, "8080/tcp")
	if err != nil {
		return f, err
	}
	url := "http://" + addr + "/"
	stop := sample(ctx, n, pid)
	env.Logf("listener livelock on %s: %d requests/s for %s against %s", env.Image.Name, p.Rate, p.Duration, url)
	f.Load, err = load.Attack(ctx, load.Options{URL: url, Rate: p.Rate, Duration: p.Duration, Timeout: p.Timeout,
		Progress: func(done uint64, el time.Duration) {
			if int(el.Seconds())%5 == 0 {
				env.Logf("  %s: %d responses so far", el.Round(time.Second), done)
			}
		}})
	f.Peaks, f.Attacked = stop(), true
	if err != nil {
		return f, err
	}
	t.Notef("load: %s", f.Load)
	t.Notef("frontend sessions peaked at %d of %d; process connections at %d of %d", f.Peaks.Frontend, f.Peaks.FrontendLimit, f.Peaks.Process, f.Peaks.ProcessLimit)
	logs, err := n.Logs(ctx)
	if err != nil {
		return f, err
	}
	f.Stalls, f.Panics = cliout.ParseStalls(logs), cliout.ParsePanics(logs)
	for _, e := range cliout.ParseWorkerExits(logs) {
		if e.Code != 0 {
			f.WorkerExits = append(f.WorkerExits, e.Line)
		}
	}
	f.MasterCode, f.MasterExited = cliout.MasterExit(logs)
	t.Notef("%d stall warnings (%d over 100 ms, longest %d ms), %d panics, %d worker exits", len(f.Stalls), longStalls(f.Stalls), cliout.MaxStall(f.Stalls), len(f.Panics), len(f.WorkerExits))
	return f, nil
}

// sample polls the frontend's and the process's connections every 250 ms
// until stop is called, which returns the peaks.
func sample(ctx context.Context, n *node.Node, pid int) (stop func() Peaks) {
	var mu sync.Mutex
	var pk Peaks
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
	return func() Peaks {
		cancel()
		<-done
		mu.Lock()
		defer mu.Unlock()
		return pk
	}
}

func longStalls(stalls []cliout.Stall) int {
	long := 0
	for _, s := range stalls {
		if s.Ms > 100 {
			long++
		}
	}
	return long
}

// layoutUnmet says how the running worker differs from what the config asks.
func layoutUnmet(f Facts) string {
	p := f.Params
	switch {
	case f.Groups != p.Groups:
		return fmt.Sprintf("the worker runs %d thread groups, the config asks %d", f.Groups, p.Groups)
	case f.Threads != int64(p.Threads):
		return fmt.Sprintf("the worker runs %d threads, the config asks %d", f.Threads, p.Threads)
	case f.Listeners != p.wantListeners():
		return fmt.Sprintf("the frontend has %d listeners, the layout %q wants %d", f.Listeners, p.Layout, p.wantListeners())
	}
	return ""
}

// Judge decides an attack from its facts.
func Judge(f Facts) (violation, unmet, remark string) {
	if u := layoutUnmet(f); u != "" {
		return "", u, ""
	}
	if !f.Attacked {
		return "", "the attack never ran", ""
	}
	pk := f.Peaks
	reached := pk.Frontend >= pk.FrontendLimit && pk.FrontendLimit > 0
	what := fmt.Sprintf("the frontend never reached its maxconn (peak %d of %d)", pk.Frontend, pk.FrontendLimit)
	if f.Params.Variant == "process" {
		reached = pk.Process >= pk.ProcessLimit && pk.ProcessLimit > 0
		what = fmt.Sprintf("the process never reached its maxconn (peak %d of %d)", pk.Process, pk.ProcessLimit)
	}
	var bad []string
	if long := longStalls(f.Stalls); long > 0 {
		bad = append(bad, fmt.Sprintf("%d stalls over 100 ms (longest %d ms)", long, cliout.MaxStall(f.Stalls)))
	}
	if len(f.Panics) > 0 {
		bad = append(bad, fmt.Sprintf("%d panics", len(f.Panics)))
	}
	if len(f.WorkerExits) > 0 {
		bad = append(bad, f.WorkerExits[0])
	}
	if f.MasterExited {
		bad = append(bad, fmt.Sprintf("master exited (%d)", f.MasterCode))
	}
	switch {
	case len(bad) > 0:
		return strings.Join(bad, ", "), "", ""
	case !reached:
		return "", what, ""
	case !WarnsOnStalls(f.Version):
		// Without the watchdog's warnings only panics and exits are seen:
		// a stall shorter than a panic would go unnoticed.
		return "", fmt.Sprintf("limit reached and no panic or exit, but HAProxy %s emits no stall warnings (3.1 and later do): stalls cannot be seen", f.Version), ""
	}
	return "", "", fmt.Sprintf("limit reached, %d stalls over 100 ms", longStalls(f.Stalls))
}

// WarnsOnStalls says whether a version emits the watchdog's "stopped
// processing traffic" warnings (3.1 and later).
func WarnsOnStalls(version string) bool {
	var major, minor int
	if _, err := fmt.Sscanf(version, "%d.%d", &major, &minor); err != nil {
		return false
	}
	return major > 3 || (major == 3 && minor >= 1)
}

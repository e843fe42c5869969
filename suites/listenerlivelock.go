package suites

import (
	"context"
	"fmt"
	"os"
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

// ListenerLivelock: "listener: dequeue_proxy_listeners() livelocks at
// maxconn with many thread groups". At the frontend's (or the process's)
// connection limit, with slots freed slowly by a slow backend and several
// listeners served by different threads, a thread releasing a connection
// loops re-enabling listeners that re-queue themselves at once, holding the
// proxy lock: watchdog warnings, sometimes a panic and exit code 134.
var ListenerLivelock = scenario.Register(&scenario.Scenario{
	ID:       "listener-livelock",
	Upstream: "haproxy listener livelock at maxconn (dequeue_proxy_listeners)",
	Title:    "listener: dequeue_proxy_listeners() livelocks at maxconn with many thread groups",
	Owner:    "area:listeners",
	Labels:   []string{"issue:listener-livelock", "area:listeners", "slow"},
	Trials:   1,
	Noun:     "runs",
	Steps: []string{
		"Setup: harp's slow backend (100 ms per request, one at a time: about 10 requests/s) on a harp network; one node with nbthread N and thread-groups G, a frontend with its maxconn (variant frontend, default 4000) or a global maxconn below it (variant process, 2000 under 4000), and several listeners served by different threads (layout groups: one bind per thread group; shards: bind ... shards by-thread; binds: one bind ... thread N per thread).",
		"Preconditions: the container has at least as many CPUs as threads; the listeners, threads and groups are what the config asks; during the attack the frontend (or the process) really reached its limit (show stat / show info sampled every 250 ms).",
		"Trigger: vegeta load from the test process (default 1000 requests/s for 15 s, 30 s timeout).",
		"Expectation: at maxconn new connections wait in the accept queue and releasing a connection takes microseconds: no watchdog warning over 100 ms, no panic, no worker or master exit.",
	},
	Run: runLivelock,
})

// livelockParams are the knobs, from the environment (make variables).
type livelockParams struct {
	Threads, Groups           int
	Layout, Variant, CPUSet   string
	Rate                      int
	Duration                  time.Duration
	FrontendMaxconn, ProcessM int
	Service, Timeout          time.Duration
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func envDur(name string, def time.Duration) time.Duration {
	if v, err := time.ParseDuration(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func envStr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// LivelockParams reads HARP_LIVELOCK_* (THREADS, GROUPS, LAYOUT, VARIANT,
// CPUSET, RATE, DURATION, TIMEOUT, MAXCONN, SERVICE).
func LivelockParams() livelockParams {
	p := livelockParams{
		Threads:         envInt("HARP_LIVELOCK_THREADS", 16),
		Layout:          envStr("HARP_LIVELOCK_LAYOUT", "groups"),
		Variant:         envStr("HARP_LIVELOCK_VARIANT", "frontend"),
		CPUSet:          os.Getenv("HARP_LIVELOCK_CPUSET"),
		Rate:            envInt("HARP_LIVELOCK_RATE", 1000),
		Duration:        envDur("HARP_LIVELOCK_DURATION", 15*time.Second),
		FrontendMaxconn: envInt("HARP_LIVELOCK_MAXCONN", 4000),
		Service:         envDur("HARP_LIVELOCK_SERVICE", 100*time.Millisecond),
		Timeout:         envDur("HARP_LIVELOCK_TIMEOUT", 30*time.Second),
	}
	p.Groups = envInt("HARP_LIVELOCK_GROUPS", p.Threads)
	if p.Layout != "groups" {
		p.Groups = envInt("HARP_LIVELOCK_GROUPS", 1)
	}
	if p.Variant == "process" {
		p.ProcessM = p.FrontendMaxconn / 2
	}
	return p
}

// cpusFor counts the CPUs a container gets: its cpuset, else all of them.
func cpusFor(cpuset string) int {
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

func (p livelockParams) config() (string, error) {
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
func (p livelockParams) wantListeners() int {
	switch p.Layout {
	case "groups":
		return p.Groups
	case "shards":
		return p.Threads
	}
	return p.Threads
}

func runLivelock(ctx context.Context, env *scenario.Env) verdict.Outcome {
	p := LivelockParams()
	cfg, err := p.config()
	env.Config = cfg
	if err != nil {
		return verdict.Outcome{Err: err}
	}
	// Precondition: a thread per CPU at least, or stalls mean nothing.
	if cpus := cpusFor(p.CPUSet); cpus < p.Threads {
		return verdict.Outcome{Unmet: fmt.Sprintf("%d CPUs < %d threads: this machine cannot show the livelock; run with THREADS=%d or on a larger machine", cpus, p.Threads, cpus)}
	}
	if env.Docker == nil {
		return verdict.Outcome{Err: fmt.Errorf("the listener suite needs Docker (a backend container and a network)")}
	}
	nw, err := tcnetwork.New(ctx, tcnetwork.WithLabels(engine.Labels(env.RunID)))
	if err != nil {
		return verdict.Outcome{Err: fmt.Errorf("creating a network: %w", err)}
	}
	defer nw.Remove(context.WithoutCancel(ctx))
	tag, err := env.Builder.Backend(ctx)
	if err != nil {
		return verdict.Outcome{Err: err}
	}
	be, err := testcontainers.Run(ctx, tag, tcnetwork.WithNetwork([]string{"backend"}, nw),
		testcontainers.WithLabels(engine.Labels(env.RunID)),
		testcontainers.WithEntrypoint(images.BackendBinary), testcontainers.WithCmd("-service", p.Service.String()),
		testcontainers.WithWaitStrategy(wait.ForLog("slowbackend on").WithStartupTimeout(30*time.Second)))
	if err != nil {
		if be != nil {
			be.Terminate(context.WithoutCancel(ctx))
		}
		return verdict.Outcome{Err: fmt.Errorf("starting the slow backend: %w", err)}
	}
	defer be.Terminate(context.WithoutCancel(ctx))
	n, err := env.Start(ctx, node.Options{Image: env.Image, Config: cfg, RunID: env.RunID, Name: "node-livelock",
		Ports: []string{"8080/tcp"}, Network: nw, CPUSet: p.CPUSet})
	if err != nil {
		if strings.Contains(err.Error(), "unknown keyword") || strings.Contains(err.Error(), "thread-groups") {
			return verdict.Outcome{Unmet: "this build does not accept the layout's configuration: " + firstLineOf(err.Error())}
		}
		return verdict.Outcome{Err: err}
	}
	defer n.Stop(context.WithoutCancel(ctx))
	t, unmet, err := livelockRun(ctx, env, n, p)
	if err != nil {
		return verdict.Outcome{Err: err}
	}
	return verdict.Outcome{Trials: []verdict.Trial{t}, Unmet: unmet}
}

func firstLineOf(s string) string { l, _, _ := strings.Cut(s, "\n"); return l }

// livelockRun attacks the node while sampling its limits, then reads the
// logs for stalls, panics and exits.
func livelockRun(ctx context.Context, env *scenario.Env, n *node.Node, p livelockParams) (t verdict.Trial, unmet string, err error) {
	t = verdict.Trial{N: 1, Evidence: map[string]any{"params": p}}
	mark, t0 := n.Mark(), time.Now()
	defer func() { t.Duration = time.Since(t0) }()
	pid, err := n.CurrentWorker(ctx)
	if err != nil {
		return t, "", err
	}
	// Preconditions that the running process confirms: threads, listeners.
	info, err := workerInfo(ctx, n, pid)
	if err != nil {
		return t, "", err
	}
	rows, err := workerStat(ctx, n, pid)
	if err != nil {
		return t, "", err
	}
	listeners := cliout.Listeners(rows, "fe")
	threads, err := n.Worker(ctx, pid, "show threads")
	if err != nil {
		return t, "", err
	}
	groups := cliout.ThreadGroups(threads)
	t.Evidence["threads"], t.Evidence["listeners"], t.Evidence["thread_groups"] = info["Nbthread"], listeners, groups
	t.Notes = append(t.Notes, fmt.Sprintf("%s threads, %d thread groups, %d listeners, %d CPUs", info["Nbthread"], groups, listeners, cpusFor(p.CPUSet)))
	if groups != p.Groups {
		return t, fmt.Sprintf("the worker runs %d thread groups, the config asks %d", groups, p.Groups), nil
	}
	if info.Int("Nbthread") != int64(p.Threads) {
		return t, fmt.Sprintf("the worker runs %s threads, the config asks %d", info["Nbthread"], p.Threads), nil
	}
	if listeners != p.wantListeners() {
		return t, fmt.Sprintf("the frontend has %d listeners, the layout %q wants %d", listeners, p.Layout, p.wantListeners()), nil
	}
	addr, err := n.Addr(ctx, "8080/tcp")
	if err != nil {
		return t, "", err
	}
	url := "http://" + addr + "/"
	// Sample the limits during the attack.
	var mu sync.Mutex
	var peakFE, limFE, peakProc, limProc int64
	sctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tk := time.NewTicker(250 * time.Millisecond)
		defer tk.Stop()
		for {
			select {
			case <-sctx.Done():
				return
			case <-tk.C:
			}
			if rows, err := workerStat(sctx, n, pid); err == nil {
				if fe, ok := cliout.FindStat(rows, "fe", "FRONTEND"); ok {
					mu.Lock()
					peakFE, limFE = max(peakFE, fe.Int("scur")), fe.Int("slim")
					mu.Unlock()
				}
			}
			if info, err := workerInfo(sctx, n, pid); err == nil {
				mu.Lock()
				peakProc, limProc = max(peakProc, info.Int("CurrConns")), info.Int("Maxconn")
				mu.Unlock()
			}
		}
	}()
	env.Logf("listener livelock on %s: %d requests/s for %s against %s", env.Image.Name, p.Rate, p.Duration, url)
	res, err := load.Attack(ctx, load.Options{URL: url, Rate: p.Rate, Duration: p.Duration, Timeout: p.Timeout,
		Progress: func(done uint64, el time.Duration) {
			if int(el.Seconds())%5 == 0 {
				env.Logf("  %s: %d responses so far", el.Round(time.Second), done)
			}
		}})
	stop()
	wg.Wait()
	if err != nil {
		return t, "", err
	}
	t.Evidence["load"] = res
	t.Notes = append(t.Notes, "load: "+res.String())
	mu.Lock()
	t.Evidence["frontend_peak"], t.Evidence["frontend_limit"] = peakFE, limFE
	t.Evidence["process_peak"], t.Evidence["process_limit"] = peakProc, limProc
	t.Notes = append(t.Notes, fmt.Sprintf("frontend sessions peaked at %d of %d; process connections at %d of %d", peakFE, limFE, peakProc, limProc))
	reached := peakFE >= limFE && limFE > 0
	what := fmt.Sprintf("the frontend never reached its maxconn (peak %d of %d)", peakFE, limFE)
	if p.Variant == "process" {
		reached = peakProc >= limProc && limProc > 0
		what = fmt.Sprintf("the process never reached its maxconn (peak %d of %d)", peakProc, limProc)
	}
	mu.Unlock()
	// Detection: the logs.
	logs, err := n.Logs(ctx)
	if err != nil {
		return t, "", err
	}
	stalls, panics := cliout.ParseStalls(logs), cliout.ParsePanics(logs)
	var exits []string
	for _, e := range cliout.ParseWorkerExits(logs) {
		if e.Code != 0 {
			exits = append(exits, e.Line)
		}
	}
	code, masterExited := cliout.MasterExit(logs)
	t.Evidence["stalls"], t.Evidence["panics"], t.Evidence["worker_exits"] = stalls, panics, exits
	long := 0
	for _, s := range stalls {
		if s.Ms > 100 {
			long++
		}
	}
	t.Notes = append(t.Notes, fmt.Sprintf("%d stall warnings (%d over 100 ms, longest %d ms), %d panics, %d worker exits", len(stalls), long, cliout.MaxStall(stalls), len(panics), len(exits)))
	t.Exchanges = n.Transcript(mark)
	var bad []string
	if long > 0 {
		bad = append(bad, fmt.Sprintf("%d stalls over 100 ms (longest %d ms)", long, cliout.MaxStall(stalls)))
	}
	if len(panics) > 0 {
		bad = append(bad, fmt.Sprintf("%d panics", len(panics)))
	}
	if len(exits) > 0 {
		bad = append(bad, exits[0])
	}
	if masterExited {
		bad = append(bad, fmt.Sprintf("master exited (%d)", code))
	}
	switch {
	case len(bad) > 0:
		t.Violation = strings.Join(bad, ", ")
	case !reached:
		t.Unmet = what
	case !warnsOnStalls(info["Version"]):
		// Without the watchdog's warnings only panics and exits are seen:
		// a stall shorter than a panic would go unnoticed.
		t.Unmet = fmt.Sprintf("limit reached and no panic or exit, but HAProxy %s emits no stall warnings (3.1 and later do): stalls cannot be seen", info["Version"])
	default:
		t.Remark = fmt.Sprintf("limit reached, %d stalls over 100 ms", long)
	}
	return t, "", nil
}

// warnsOnStalls says whether a version emits the watchdog's "stopped
// processing traffic" warnings (3.1 and later).
func warnsOnStalls(version string) bool {
	var major, minor int
	if _, err := fmt.Sscanf(version, "%d.%d", &major, &minor); err != nil {
		return false
	}
	return major > 3 || (major == 3 && minor >= 1)
}

func workerInfo(ctx context.Context, n *node.Node, pid int) (cliout.Info, error) {
	raw, err := n.Worker(ctx, pid, "show info")
	if err != nil {
		return nil, err
	}
	return cliout.ParseInfo(raw)
}

func workerStat(ctx context.Context, n *node.Node, pid int) ([]cliout.StatRow, error) {
	raw, err := n.Worker(ctx, pid, "show stat")
	if err != nil {
		return nil, err
	}
	return cliout.ParseStat(raw)
}

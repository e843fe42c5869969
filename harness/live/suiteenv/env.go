package suiteenv

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/moby/moby/client"

	"github.com/harp-project/harp/harness/core/record"
	"github.com/harp-project/harp/harness/core/suite"
	"github.com/harp-project/harp/harness/core/verdict"
	"github.com/harp-project/harp/harness/live/cluster"
	"github.com/harp-project/harp/harness/live/nemesis"
	"github.com/harp-project/harp/harness/live/node"
	"github.com/harp-project/harp/images"
)

// Env is what a suite's run gets from the runner.
type Env struct {
	Suite *suite.Suite
	Image *images.Image
	// Docker and Builder serve suites that need more than HAProxy nodes
	// (a backend container, a network).
	Docker  *client.Client
	Builder *images.Builder
	// Start starts a node of Image: a container, or for baselines a local
	// process. StartNode goes through it.
	Start  func(ctx context.Context, o node.Options) (*node.Node, error)
	RunID  string
	Trials int
	Params suite.Values
	// CPUs limits every HAProxy container of the run to a share of CPU
	// time (0: no limit).
	CPUs float64
	// Config is the configuration the report shows; StartNode and
	// StartCluster set it.
	Config string
	// Crashes are the HAProxy processes that died on a signal (or wrote an
	// ASan report), with their evidence, gathered when nodes stop;
	// CrashWatch says how many nodes that checked and which it could not.
	Crashes    []verdict.Crash
	CrashWatch verdict.CrashWatch
	// Logf prints progress.
	Logf func(format string, args ...any)

	mu        sync.Mutex
	watched   []watched
	collected map[*node.Node]bool
	configs   int    // distinct node configs recorded in Config
	firstNode string // the node that ran the first
	cleanups  []func(ctx context.Context)
}

type watched struct {
	name string
	n    *node.Node
}

// Watch adds a node whose runtime exchanges go into each trial's transcript.
func (env *Env) Watch(name string, n *node.Node) {
	env.mu.Lock()
	env.watched = append(env.watched, watched{name, n})
	env.mu.Unlock()
}

// Cleanup runs f when the run ends, latest first.
func (env *Env) Cleanup(f func(ctx context.Context)) {
	env.mu.Lock()
	env.cleanups = append(env.cleanups, f)
	env.mu.Unlock()
}

// Close stops what the run started, after gathering the crash evidence of
// every watched node (with its own deadline: the stops get ctx's whole
// time); the runner calls it.
func (env *Env) Close(ctx context.Context) {
	start := time.Now()
	env.mu.Lock()
	ws := append([]watched(nil), env.watched...)
	env.mu.Unlock()
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Minute)
	env.collectAll(cctx, ws)
	cancel()
	env.mu.Lock()
	fs := env.cleanups
	env.cleanups = nil
	env.mu.Unlock()
	if dl, ok := ctx.Deadline(); ok { // what collecting took, given back
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(context.WithoutCancel(ctx), dl.Add(time.Since(start)))
		defer cancel()
	}
	for i := len(fs) - 1; i >= 0; i-- {
		fs[i](ctx)
	}
}

// StopNode stops a node before the run ends (a suite that starts one per
// trial), keeping its crash evidence first.
func (env *Env) StopNode(ctx context.Context, n *node.Node) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Minute)
	env.collectCrashes(cctx, n)
	cancel()
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	n.Stop(sctx)
}

// collectAll collects every node's crash evidence side by side (each
// waits for its own node to settle), recorded in the order of ws.
func (env *Env) collectAll(ctx context.Context, ws []watched) {
	type got struct {
		cs  []verdict.Crash
		err error
		ok  bool
	}
	res := make([]got, len(ws))
	var wg sync.WaitGroup
	for i, w := range ws {
		if !env.claim(w.n) {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			cs, err := w.n.Crashes(ctx)
			res[i] = got{cs, err, true}
		}()
	}
	wg.Wait()
	for i, w := range ws {
		if res[i].ok {
			env.record(w.n, res[i].cs, res[i].err)
		}
	}
}

// claim says whether n's crashes are still to be collected, and marks
// them collected.
func (env *Env) claim(n *node.Node) bool {
	env.mu.Lock()
	defer env.mu.Unlock()
	if env.collected == nil {
		env.collected = map[*node.Node]bool{}
	}
	done := env.collected[n]
	env.collected[n] = true
	return !done
}

// collectCrashes records, once per node, the processes that died on a
// signal with their backtraces (Crashes), and whether the node could be
// checked at all (CrashWatch): a node harp could not read may have crashed
// unseen, which is no "none crashed".
func (env *Env) collectCrashes(ctx context.Context, n *node.Node) {
	if !env.claim(n) {
		return
	}
	cs, err := n.Crashes(ctx)
	env.record(n, cs, err)
}

// record keeps one node's crashes and whether it could be checked.
func (env *Env) record(n *node.Node, cs []verdict.Crash, err error) {
	for i := range cs {
		cs[i].Suite = env.Suite.ID
		c := cs[i]
		what := c.Signal
		if c.Signature != "" {
			what += " in " + c.Signature
		}
		env.Logf("%s on %s: %s %d of %s died (%s): crash evidence recorded", env.Suite.Name(), env.Image.Name, c.ProcessKind(), c.PID, c.Node, what)
	}
	env.mu.Lock()
	env.Crashes = append(env.Crashes, cs...)
	if err != nil {
		env.CrashWatch.Failed = append(env.CrashWatch.Failed, fmt.Sprintf("%s of #%s: %v", n.Name, env.Suite.ID, err))
	} else {
		env.CrashWatch.Nodes++
	}
	env.mu.Unlock()
}

// StartNode renders nothing itself: it records cfg as the run's config,
// starts one node of the build under test (stopped when the run ends),
// watches its transcript and checks it runs the threads the setup needs
// (0: not checked). A node that runs other threads is an unmet
// precondition.
func (env *Env) StartNode(ctx context.Context, o node.Options, threads int) (n *node.Node, unmet string, err error) {
	return env.startNode(ctx, o, threads, func(n *node.Node) { env.Cleanup(func(ctx context.Context) { n.Stop(ctx) }) })
}

// startNode is StartNode; stopLater registers the node's stop.
func (env *Env) startNode(ctx context.Context, o node.Options, threads int, stopLater func(*node.Node)) (n *node.Node, unmet string, err error) {
	o.Image, o.RunID = env.Image, env.RunID
	if o.CPUs == 0 {
		o.CPUs = env.CPUs
	}
	if o.Name == "" {
		o.Name = "node-" + env.Suite.ID
	}
	env.addConfig(o.Name, o.Config)
	n, err = env.Start(ctx, o)
	if err != nil {
		return nil, "", err
	}
	stopLater(n)
	env.Watch(o.Name, n)
	if threads > 0 {
		if unmet, err = CheckThreads(ctx, n, threads); err != nil || unmet != "" {
			return nil, unmet, err
		}
	}
	return n, "", nil
}

// StartNodes starts k nodes of the same options side by side (StartNode
// each; the first keeps o.Name, the others add -2, -3, ...), for trials
// that run on several nodes at once (RunTrialsOn); they stop side by side
// too. The first node that fails to start or misses a precondition is the
// answer.
func (env *Env) StartNodes(ctx context.Context, k int, o node.Options, threads int) ([]*node.Node, string, error) {
	if o.Name == "" {
		o.Name = "node-" + env.Suite.ID
	}
	var mu sync.Mutex
	var started []*node.Node
	env.Cleanup(func(ctx context.Context) {
		mu.Lock()
		ns := started
		mu.Unlock()
		var wg sync.WaitGroup
		for _, n := range ns {
			wg.Add(1)
			go func() { defer wg.Done(); n.Stop(ctx) }()
		}
		wg.Wait()
	})
	stopLater := func(n *node.Node) { mu.Lock(); started = append(started, n); mu.Unlock() }
	nodes := make([]*node.Node, k)
	unmets, errs := make([]string, k), make([]error, k)
	var wg sync.WaitGroup
	for i := range k {
		oi := o
		if i > 0 {
			oi.Name = fmt.Sprintf("%s-%d", o.Name, i+1)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			nodes[i], unmets[i], errs[i] = env.startNode(ctx, oi, threads, stopLater)
		}()
	}
	wg.Wait()
	for i := range k {
		if errs[i] != nil || unmets[i] != "" {
			return nil, unmets[i], errs[i]
		}
	}
	return nodes, "", nil
}

// addConfig records a node's config as the run's: a run that starts nodes
// of several configs records each one once, headed by the first node's
// name that ran it.
func (env *Env) addConfig(name, cfg string) {
	env.mu.Lock()
	defer env.mu.Unlock()
	switch {
	case env.Config == "":
		env.Config, env.configs = cfg, 1
	case strings.Contains(env.Config, cfg):
	default:
		if env.configs == 1 {
			env.Config = "# ---- " + env.firstNode + "\n" + env.Config
		}
		env.Config += "\n# ---- " + name + "\n" + cfg
		env.configs++
	}
	if env.firstNode == "" {
		env.firstNode = name
	}
}

// CheckThreads says whether the node's current worker runs want threads.
func CheckThreads(ctx context.Context, n *node.Node, want int) (unmet string, err error) {
	info, err := n.Info(ctx, node.Current)
	if err != nil {
		return "", err
	}
	if info.Int("Nbthread") != int64(want) {
		return fmt.Sprintf("the setup needs nbthread %d, the worker runs %s threads", want, info["Nbthread"]), nil
	}
	return "", nil
}

// Nodes is the run's cluster size: NODES when the suite declares it, else 3.
func (env *Env) Nodes() int {
	if env.Params.Has(suite.NodesParam.Name) {
		return env.Params.Int(suite.NodesParam.Name)
	}
	return 3
}

// StartCluster starts a cluster of the build under test (Nodes() nodes
// unless o says), stopped when the run ends, and waits until every node's
// stats socket answers; with mesh, also until every link is established
// and every initial resync finished (else unmet says what never was).
func (env *Env) StartCluster(ctx context.Context, o cluster.Options, mesh bool) (c *cluster.Cluster, unmet string, err error) {
	if env.Docker == nil {
		return nil, "", fmt.Errorf("the peers-cluster suites need Docker (a private network)")
	}
	o.Image, o.RunID = env.Image, env.RunID
	if o.Builder == nil {
		o.Builder = env.Builder
	}
	if o.CPUs == 0 {
		o.CPUs = env.CPUs
	}
	if len(o.Nodes) == 0 {
		o.Nodes = cluster.Nodes(env.Nodes())
	}
	c, err = cluster.Start(ctx, env.Docker, o)
	if err != nil {
		return nil, "", err
	}
	env.Cleanup(func(ctx context.Context) { c.Stop(ctx) })
	env.Config = c.Configs()
	for _, m := range c.Members {
		env.Watch(m.Name, m.Node)
	}
	if err := c.WaitSockets(ctx, 15*time.Second); err != nil {
		return nil, "", err
	}
	if mesh {
		if unmet := c.WaitMesh(ctx, cluster.MeshTimeout); unmet != "" {
			return nil, unmet, nil
		}
	}
	return c, "", nil
}

// Stop, returned by a trial, ends the run after that trial without an
// error (e.g. the master is gone: later trials would say nothing new).
var Stop = errors.New("no further trials")

// RunTrials runs env.Trials trials of one: it numbers them, collects the
// transcripts of every watched node, times them, prints a progress line
// after each, and stops at a harness error (the outcome's Err, named after
// the trial) or when one returns Stop. out holds what came before (e.g. a
// run-level precondition's notes).
func (env *Env) RunTrials(ctx context.Context, one func(ctx context.Context, t *verdict.Trial) error) verdict.Outcome {
	numbers := make([]int, env.Trials)
	for i := range numbers {
		numbers[i] = i + 1
	}
	mark := func() func() []record.Exchange {
		marks := env.marks()
		return func() []record.Exchange { return env.since(marks) }
	}
	trials, err := env.runLane(ctx, numbers, mark, one)
	return verdict.Outcome{Trials: trials, Err: err}
}

// RunTrialsOn runs env.Trials trials spread over nodes that run side by
// side: trial i on nodes[(i-1) % len(nodes)], each node's trials one after
// another. What one node's trials share (its tables, its resync timers)
// stays on that node; a trial's transcript is its own node's exchanges. A
// harness error stops every node's trials (the first one is the outcome's
// Err); Stop, or an unmet precondition that lasts, stops that node's.
func (env *Env) RunTrialsOn(ctx context.Context, nodes []*node.Node, one func(ctx context.Context, n *node.Node, t *verdict.Trial) error) verdict.Outcome {
	if len(nodes) == 1 {
		return env.RunTrials(ctx, func(ctx context.Context, t *verdict.Trial) error { return one(ctx, nodes[0], t) })
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu       sync.Mutex
		all      []verdict.Trial
		first    error
		wg       sync.WaitGroup
		prefixes = env.names()
	)
	for lane, n := range nodes {
		var numbers []int
		for i := lane + 1; i <= env.Trials; i += len(nodes) {
			numbers = append(numbers, i)
		}
		mark := func() func() []record.Exchange {
			from := n.Mark()
			return func() []record.Exchange {
				ex := n.Transcript(from)
				for i := range ex {
					if name := prefixes[n]; name != "" {
						ex[i].Target = name + " " + ex[i].Target
					}
				}
				return ex
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			trials, err := env.runLane(ctx, numbers, mark, func(ctx context.Context, t *verdict.Trial) error { return one(ctx, n, t) })
			mu.Lock()
			defer mu.Unlock()
			all = append(all, trials...)
			if err != nil && first == nil {
				first = err
				cancel() // the other nodes' trials would end on a harness that failed
			}
		}()
	}
	wg.Wait()
	sort.Slice(all, func(i, j int) bool { return all[i].N < all[j].N })
	return verdict.Outcome{Trials: all, Err: first}
}

// runLane runs the trials numbered numbers one after another: mark, taken
// before each, gives that trial's transcript after it.
func (env *Env) runLane(ctx context.Context, numbers []int, mark func() func() []record.Exchange, one func(ctx context.Context, t *verdict.Trial) error) ([]verdict.Trial, error) {
	noun := singular(env.Suite.Noun)
	var done []verdict.Trial
	for k, i := range numbers {
		if ctx.Err() != nil {
			break
		}
		t := &verdict.Trial{N: i}
		since, t0, faults := mark(), time.Now(), nemesis.Mark()
		err := one(ctx, t)
		t.Duration, t.Exchanges = time.Since(t0), since()
		if t.HarnessFaults = nemesis.Since(faults); len(t.HarnessFaults) > 0 {
			seed, _ := nemesis.Seed()
			t.Notef("%d harness faults injected while it ran (nemesis seed %d; lanes side by side share them)", len(t.HarnessFaults), seed)
		}
		ts := []verdict.Trial{*t}
		verdict.MarkUnknown(ts) // the progress line already says what Decide will
		*t = ts[0]
		done = append(done, *t)
		if err != nil && !errors.Is(err, Stop) {
			return done, fmt.Errorf("%s %d: %w", noun, i, err)
		}
		env.Logf("%s on %s: %s %d of %d: %s", env.Suite.Name(), env.Image.Name, noun, i, env.Trials, Summary(*t))
		if err != nil {
			break
		}
		if t.Unmet != "" && t.Lasting && k < len(numbers)-1 {
			// The build itself keeps the precondition from holding: the
			// remaining trials would spend their deadlines to say the same.
			env.Logf("%s on %s: stopping after %s %d: the unmet precondition lasts (%s)", env.Suite.Name(), env.Image.Name, noun, i, t.Unmet)
			break
		}
	}
	return done, nil
}

// names maps each watched node to its name, when the run watches more than
// one (a transcript then says whose each exchange is).
func (env *Env) names() map[*node.Node]string {
	env.mu.Lock()
	defer env.mu.Unlock()
	m := map[*node.Node]string{}
	if len(env.watched) > 1 {
		for _, w := range env.watched {
			m[w.n] = w.name
		}
	}
	return m
}

func singular(noun string) string { return verdict.Singular(noun) }

// Summary is a trial's progress line.
func Summary(t verdict.Trial) string {
	switch {
	case t.UnmetReason() != "" && t.Violation != "":
		return "inconclusive: " + t.UnmetReason() + " (a violation was also recorded: " + t.Violation + ")"
	case t.UnmetReason() != "":
		return "inconclusive: " + t.UnmetReason()
	case t.Violation != "":
		return "violated: " + t.Violation
	}
	return "held"
}

func (env *Env) marks() map[*node.Node]int {
	env.mu.Lock()
	defer env.mu.Unlock()
	m := map[*node.Node]int{}
	for _, w := range env.watched {
		m[w.n] = w.n.Mark()
	}
	return m
}

// since gathers the watched nodes' exchanges since the marks (nodes
// started during the trial from their first), named by node when the
// run watches more than one.
func (env *Env) since(marks map[*node.Node]int) []record.Exchange {
	env.mu.Lock()
	ws := append([]watched(nil), env.watched...)
	env.mu.Unlock()
	var all []record.Exchange
	for _, w := range ws {
		for _, e := range w.n.Transcript(marks[w.n]) {
			if len(ws) > 1 {
				e.Target = w.name + " " + e.Target
			}
			all = append(all, e)
		}
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].At.Before(all[j].At) })
	return all
}

// RunFunc is what a suite's Run is: the registry keeps it untyped (it
// links no Docker), and Run calls it.
type RunFunc = func(ctx context.Context, env *Env) verdict.Outcome

// Run runs s on env: s.Run must be a RunFunc (suites/all's test checks
// every registered suite's).
func Run(ctx context.Context, s *suite.Suite, env *Env) verdict.Outcome {
	run, ok := s.Run.(RunFunc)
	if !ok {
		return verdict.Outcome{Err: fmt.Errorf("suite %s: its Run is a %T, not a suiteenv.RunFunc", s.ID, s.Run)}
	}
	return run(ctx, env)
}

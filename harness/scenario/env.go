package scenario

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/moby/moby/client"

	"github.com/harp-project/harp/harness/cli"
	"github.com/harp-project/harp/harness/cluster"
	"github.com/harp-project/harp/harness/node"
	"github.com/harp-project/harp/harness/verdict"
	"github.com/harp-project/harp/images"
)

// Env is what a suite's run gets from the runner.
type Env struct {
	Suite *Scenario
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
	Params Values
	// CPUs limits every HAProxy container of the run to a share of CPU
	// time (0: no limit).
	CPUs float64
	// Config is the configuration the report shows; StartNode and
	// StartCluster set it.
	Config string
	// Logf prints progress.
	Logf func(format string, args ...any)

	mu       sync.Mutex
	watched  []watched
	cleanups []func(ctx context.Context)
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

// Close stops what the run started; the runner calls it.
func (env *Env) Close(ctx context.Context) {
	env.mu.Lock()
	fs := env.cleanups
	env.cleanups = nil
	env.mu.Unlock()
	for i := len(fs) - 1; i >= 0; i-- {
		fs[i](ctx)
	}
}

// StartNode renders nothing itself: it records cfg as the run's config,
// starts one node of the build under test (stopped when the run ends),
// watches its transcript and checks it runs the threads the setup needs
// (0: not checked). A node that runs other threads is an unmet
// precondition.
func (env *Env) StartNode(ctx context.Context, o node.Options, threads int) (n *node.Node, unmet string, err error) {
	env.Config = o.Config
	o.Image, o.RunID = env.Image, env.RunID
	if o.CPUs == 0 {
		o.CPUs = env.CPUs
	}
	if o.Name == "" {
		o.Name = "node-" + env.Suite.ID
	}
	n, err = env.Start(ctx, o)
	if err != nil {
		return nil, "", err
	}
	env.Cleanup(func(ctx context.Context) { n.Stop(ctx) })
	env.Watch(o.Name, n)
	if threads > 0 {
		if unmet, err = CheckThreads(ctx, n, threads); err != nil || unmet != "" {
			return nil, unmet, err
		}
	}
	return n, "", nil
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

// NodesParam is the cluster size every cluster suite declares; the last
// node is the one a suite singles out.
var NodesParam = Int("NODES", 3, 3, 9, "nodes in the cluster (the last one is singled out)")

// Nodes is the run's cluster size: NODES when the suite declares it, else 3.
func (env *Env) Nodes() int {
	if _, ok := env.Params.v[NodesParam.Name]; ok {
		return env.Params.Int(NodesParam.Name)
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

// Trial is one trial in progress: the verdict.Trial it becomes, plus
// helpers for what suites record.
type Trial struct {
	verdict.Trial
}

// Notef adds an observation to the report.
func (t *Trial) Notef(format string, args ...any) {
	t.Notes = append(t.Notes, fmt.Sprintf(format, args...))
}

// Show adds runtime output the report shows whole.
func (t *Trial) Show(title, text string) {
	t.Blocks = append(t.Blocks, verdict.Block{Title: title, Text: text})
}

// Stop, returned by a trial, ends the run after that trial without an
// error (e.g. the master is gone: later trials would say nothing new).
var Stop = errors.New("no further trials")

// RunTrials runs env.Trials trials of one: it numbers them, collects the
// transcripts of every watched node, times them, prints a progress line
// after each, and stops at a harness error (the outcome's Err, named after
// the trial) or when one returns Stop. out holds what came before (e.g. a
// run-level precondition's notes).
func (env *Env) RunTrials(ctx context.Context, one func(ctx context.Context, t *Trial) error) verdict.Outcome {
	var out verdict.Outcome
	noun := singular(env.Suite.Noun)
	for i := 1; i <= env.Trials && ctx.Err() == nil; i++ {
		t := &Trial{Trial: verdict.Trial{N: i}}
		marks, t0 := env.marks(), time.Now()
		err := one(ctx, t)
		t.Duration, t.Exchanges = time.Since(t0), env.since(marks)
		out.Trials = append(out.Trials, t.Trial)
		if err != nil && !errors.Is(err, Stop) {
			out.Err = fmt.Errorf("%s %d: %w", noun, i, err)
			return out
		}
		env.Logf("%s on %s: %s %d of %d: %s", env.Suite.Name(), env.Image.Name, noun, i, env.Trials, Summary(t.Trial))
		if err != nil {
			break
		}
	}
	return out
}

func singular(noun string) string {
	if len(noun) > 1 && noun[len(noun)-1] == 's' {
		return noun[:len(noun)-1]
	}
	return noun
}

// Summary is a trial's progress line.
func Summary(t verdict.Trial) string {
	switch {
	case t.Violation != "":
		return "violated: " + t.Violation
	case t.Unmet != "":
		return "inconclusive: " + t.Unmet
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
func (env *Env) since(marks map[*node.Node]int) []cli.Exchange {
	env.mu.Lock()
	ws := append([]watched(nil), env.watched...)
	env.mu.Unlock()
	var all []cli.Exchange
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

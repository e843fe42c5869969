package suites

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/harp-project/harp/harness/cli"
	"github.com/harp-project/harp/harness/cliout"
	"github.com/harp-project/harp/harness/cluster"
	"github.com/harp-project/harp/harness/doctor"
	"github.com/harp-project/harp/harness/node"
	"github.com/harp-project/harp/harness/scenario"
	"github.com/harp-project/harp/harness/verdict"
)

// What the peers-cluster suites share: starting a cluster, waiting for its
// mesh, writing keys, watching them spread, and asking the doctor.

const (
	meshTimeout     = 30 * time.Second // every link established (2.6 may collide and retry after 5 s)
	convergeTimeout = 15 * time.Second // a written key on every node
	clusterTable    = "cluster/tbl"
)

// startCluster starts a cluster of env's build and waits for every link to
// be established. When ok is false, out is the outcome to return and
// nothing is left running; else the caller stops the cluster.
func startCluster(ctx context.Context, env *scenario.Env, o cluster.Options, mesh bool) (c *cluster.Cluster, out verdict.Outcome, ok bool) {
	if env.Docker == nil {
		return nil, verdict.Outcome{Err: fmt.Errorf("the peers-cluster suites need Docker (a private network)")}, false
	}
	o.Image, o.RunID = env.Image, env.RunID
	if len(o.Nodes) == 0 {
		n, err := clusterSize()
		if err != nil {
			return nil, verdict.Outcome{Err: err}, false
		}
		o.Nodes = cluster.Nodes(n)
	}
	c, err := cluster.Start(ctx, env.Docker, o)
	if err != nil {
		return nil, verdict.Outcome{Err: err}, false
	}
	env.Config = clusterConfigs(c)
	// Every node's stats socket answers (its worker is up behind Docker's
	// port proxy) before anything is written.
	for _, m := range c.Members {
		err := node.Poll(ctx, 15*time.Second, 100*time.Millisecond, func() (bool, error) {
			_, err := m.Node.Stats(ctx, "show info")
			return err == nil, nil
		})
		if err != nil {
			c.Stop(context.WithoutCancel(ctx))
			return nil, verdict.Outcome{Err: fmt.Errorf("%s: the stats socket never answered: %w", m.Name, err)}, false
		}
	}
	if mesh {
		if unmet := waitMesh(ctx, c, meshTimeout); unmet != "" {
			c.Stop(context.WithoutCancel(ctx))
			return nil, verdict.Outcome{Unmet: unmet}, false
		}
	}
	return c, verdict.Outcome{}, true
}

// clusterSize is how many nodes the cluster suites start: 3, or
// HARP_CLUSTER_NODES (3 to 9). The last node is the one a suite cuts off,
// misnames or defines differently.
func clusterSize() (int, error) {
	v := os.Getenv("HARP_CLUSTER_NODES")
	if v == "" {
		return 3, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 3 || n > 9 {
		return 0, fmt.Errorf("HARP_CLUSTER_NODES=%q: want a number of nodes from 3 to 9", v)
	}
	return n, nil
}

// clusterConfigs is the configuration the report shows: the first node's,
// and any node's that differs from it.
func clusterConfigs(c *cluster.Cluster) string {
	var b strings.Builder
	for i, m := range c.Members {
		if i == 0 || m.Config != c.Members[0].Config {
			fmt.Fprintf(&b, "# %s (%s)\n%s\n", m.Name, m.IP, m.Config)
		}
	}
	return b.String()
}

// waitMesh polls until every node's local peer has an established session
// with every remote peer and every node has finished its initial resync;
// else it says which links never came up or which resync never finished.
func waitMesh(ctx context.Context, c *cluster.Cluster, timeout time.Duration) string {
	var down []string
	err := node.Poll(ctx, timeout, 200*time.Millisecond, func() (bool, error) {
		down = down[:0]
		for _, m := range c.Members {
			secs, err := peersOf(ctx, m)
			if err != nil {
				down = append(down, fmt.Sprintf("%s: %v", m.Name, err))
				continue
			}
			sec, found := section(secs, c.Section)
			if !found {
				down = append(down, m.Name+": no peers section "+c.Section)
				continue
			}
			for _, p := range sec.Peers {
				if !p.Local && !p.Established() {
					down = append(down, fmt.Sprintf("%s->%s (last_status=%s)", m.Name, p.Name, p.LastStatus))
				}
			}
			// A process that has not finished its initial resync does not
			// teach a new process on reload: a precondition, as in #3517.
			if !sec.ResyncFinished() {
				down = append(down, fmt.Sprintf("%s: initial resync not finished (flags=0x%x)", m.Name, sec.Flags))
			}
		}
		return len(down) == 0, nil
	})
	if err != nil {
		return fmt.Sprintf("the cluster never meshed and synced within %s: %s", timeout, strings.Join(down, ", "))
	}
	return ""
}

func peersOf(ctx context.Context, m *cluster.Member) ([]cliout.PeersSection, error) {
	out, err := m.Node.Stats(ctx, "show peers")
	if err != nil {
		return nil, err
	}
	return cliout.ParsePeers(out)
}

func section(secs []cliout.PeersSection, name string) (cliout.PeersSection, bool) {
	for _, s := range secs {
		if s.Name == name {
			return s, true
		}
	}
	return cliout.PeersSection{}, false
}

// setKeys writes keys on a node through its runtime socket; wrote, when
// set, is told each key as soon as it is written.
func setKeys(ctx context.Context, m *cluster.Member, table string, keys []string, data string, wrote ...func(string)) error {
	for _, k := range keys {
		if _, err := m.Node.Stats(ctx, fmt.Sprintf("set table %s key %s %s", table, k, data)); err != nil {
			return fmt.Errorf("set table on %s: %w", m.Name, err)
		}
		for _, f := range wrote {
			f(k)
		}
	}
	return nil
}

// tableOf reads a table on a node, entries included.
func tableOf(ctx context.Context, m *cluster.Member, table string) (cliout.Table, error) {
	out, err := m.Node.Stats(ctx, "show table "+table)
	if err != nil {
		return cliout.Table{}, err
	}
	return cliout.ParseTable(out)
}

// spread polls every member until each key is on all of them, and gives
// when each key was first seen everywhere (missing keys are left out).
func spread(ctx context.Context, members []*cluster.Member, table string, keys []string, timeout time.Duration) map[string]time.Time {
	seen := map[string]time.Time{}
	_ = node.Poll(ctx, timeout, 20*time.Millisecond, func() (bool, error) {
		on := map[string]int{}
		for _, m := range members {
			t, err := tableOf(ctx, m, table)
			if err != nil {
				continue
			}
			for _, e := range t.Entries {
				on[e.Key]++
			}
		}
		now := time.Now()
		for _, k := range keys {
			if _, done := seen[k]; !done && on[k] == len(members) {
				seen[k] = now
			}
		}
		return len(seen) == len(keys), nil
	})
	return seen
}

// since turns the times keys were seen into delays after they were written.
func since(seen, written map[string]time.Time) map[string]time.Duration {
	out := map[string]time.Duration{}
	for k, at := range seen {
		if w, ok := written[k]; ok {
			out[k] = at.Sub(w)
		}
	}
	return out
}

// writer writes keys in the background, recording when each was written.
type writer struct {
	mu      sync.Mutex
	written map[string]time.Time
	wait    func() error
}

func startWriting(ctx context.Context, f func(ctx context.Context, wrote func(key string)) error) *writer {
	w := &writer{written: map[string]time.Time{}}
	w.wait = background(ctx, func(ctx context.Context) error {
		return f(ctx, func(k string) {
			w.mu.Lock()
			w.written[k] = time.Now()
			w.mu.Unlock()
		})
	})
	return w
}

// done waits for the writes and returns when each key was written.
func (w *writer) done() (map[string]time.Time, error) {
	err := w.wait()
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.written, err
}

// missingOn lists, per member, the keys it lacks.
func missingOn(ctx context.Context, members []*cluster.Member, table string, keys []string) (map[string][]string, error) {
	out := map[string][]string{}
	for _, m := range members {
		t, err := tableOf(ctx, m, table)
		if err != nil {
			return nil, err
		}
		for _, k := range keys {
			if _, ok := t.Lookup(k); !ok {
				out[m.Name] = append(out[m.Name], k)
			}
		}
	}
	return out, nil
}

// diagnose runs the doctor on the cluster's admin sockets (through the
// nodes, so its commands are in the transcript).
func diagnose(ctx context.Context, c *cluster.Cluster, members ...*cluster.Member) (doctor.Diagnosis, error) {
	if len(members) == 0 {
		members = c.Members
	}
	var ins []doctor.Instance
	for _, m := range members {
		in, err := doctor.Collect(ctx, m.Name, m.Name+" admin socket", m.Node.Stats)
		if err != nil {
			return doctor.Diagnosis{}, err
		}
		ins = append(ins, in)
	}
	return doctor.Diagnose(ins), nil
}

// keys makes n keys with a prefix.
func keys(prefix string, n int) []string {
	var ks []string
	for i := range n {
		ks = append(ks, fmt.Sprintf("%s%03d", prefix, i))
	}
	return ks
}

// httpKeys sends requests per key to a node's frontend, which tracks the
// x-key header: real traffic that counts http_req_cnt per key.
func httpKeys(ctx context.Context, m *cluster.Member, ks []string, per int, wrote ...func(string)) error {
	cl := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	for _, k := range ks {
		for range per {
			req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+m.HTTP+"/", nil)
			req.Header.Set("x-key", k)
			resp, err := cl.Do(req)
			if err != nil {
				return fmt.Errorf("HTTP to %s: %w", m.Name, err)
			}
			resp.Body.Close()
			if resp.StatusCode != 200 {
				return fmt.Errorf("HTTP to %s: status %d", m.Name, resp.StatusCode)
			}
		}
		for _, f := range wrote {
			f(k)
		}
	}
	return nil
}

// durations sums up times to converge: median and max.
func durations(ds map[string]time.Duration) (median, maximum time.Duration) {
	var all []time.Duration
	for _, d := range ds {
		all = append(all, d)
	}
	if len(all) == 0 {
		return 0, 0
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	return all[len(all)/2], all[len(all)-1]
}

// transcripts gathers the members' exchanges since their marks.
type marks map[*cluster.Member]int

func mark(c *cluster.Cluster) marks {
	m := marks{}
	for _, x := range c.Members {
		m[x] = x.Node.Mark()
	}
	return m
}

func (mk marks) exchanges() []cli.Exchange {
	var all []cli.Exchange
	for m, from := range mk {
		for _, e := range m.Node.Transcript(from) {
			e.Target = m.Name + " " + e.Target
			all = append(all, e)
		}
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].At.Before(all[j].At) })
	return all
}

// doctorBlock is a diagnosis as a report block.
func doctorBlock(title string, d doctor.Diagnosis) verdict.Block {
	return verdict.Block{Title: title, Text: d.Text()}
}

// background runs f; wait waits for it to return and gives its error.
func background(ctx context.Context, f func(ctx context.Context) error) (wait func() error) {
	var wg sync.WaitGroup
	var err error
	wg.Add(1)
	go func() { defer wg.Done(); err = f(ctx) }()
	return func() error { wg.Wait(); return err }
}

// rounds runs env.Trials trials of a cluster suite, logging each; a
// harness error ends the run with the trials so far.
func rounds(ctx context.Context, env *scenario.Env, suite, noun string, out verdict.Outcome, trial func(r int) (verdict.Trial, error)) verdict.Outcome {
	for r := 1; r <= env.Trials && ctx.Err() == nil; r++ {
		t, err := trial(r)
		out.Trials = append(out.Trials, t)
		if err != nil {
			out.Err = err
			return out
		}
		env.Logf("%s on %s: %s %d of %d: %s", suite, env.Image.Name, noun, r, env.Trials, trialSummary(t))
	}
	return out
}

// sleep waits d, or less when ctx ends first.
func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

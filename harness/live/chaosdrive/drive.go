// Package drive runs a chaos history on a cluster: writers, faults and
// reloads drawn from a seed, then the heal and the final reads. The
// history it records is judged by package chaos, which needs no Docker.
package chaosdrive

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/harp-project/harp/harness/core/chaos"
	"github.com/harp-project/harp/harness/core/obs"
	"github.com/harp-project/harp/harness/live/cluster"
	"github.com/harp-project/harp/harness/live/node"
)

// Tables of a chaos cluster: the main one (convergence, values, reloads)
// and one whose entries must expire during the run.
var Tables = []cluster.Table{
	{Name: "tbl", Type: "string len 32", Store: "gpc0", Expire: "10m"},
	{Name: "short", Type: "string len 32", Store: "gpc0", Expire: "5s"},
}

// Options of a chaos run.
type Options struct {
	Seed     int64
	Duration time.Duration
	Faults   []string // kinds to pick from (nil: all)
	Quiet    time.Duration
	Logf     func(format string, args ...any)
}

// Run drives a cluster (started with Tables, HTTP rule sc-inc-gpc0(0) and
// Links) for o.Duration: every node writes the keys it owns through the
// CLI and through traffic, a scheduler applies faults and reloads chosen
// from the seed; then everything is healed, the cluster left quiet, and
// every node's tables read.
func Run(ctx context.Context, c *cluster.Cluster, o Options) (chaos.History, error) {
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	if o.Quiet == 0 {
		o.Quiet = 20 * time.Second
	}
	kinds := o.Faults
	if len(kinds) == 0 {
		kinds = chaos.FaultKinds
	}
	if _, err := chaos.ParseFaults(strings.Join(kinds, ",")); err != nil {
		return chaos.History{}, err
	}
	section := c.Section + "/"
	h := chaos.History{Seed: o.Seed, Owners: map[string]string{}, Tables: map[string]int64{"tbl": 600000, "short": 5000}, Main: "tbl"}
	for _, m := range c.Members {
		h.Nodes = append(h.Nodes, m.Name)
		for i := 0; i < 4; i++ {
			h.Owners[fmt.Sprintf("%s-k%d", m.Name, i)] = m.Name
		}
	}
	rec := &recorder{h: &h, paused: map[string]map[int]bool{}}
	holds := map[string]*sync.RWMutex{} // a node's writer waits while its node resyncs
	for _, m := range c.Members {
		holds[m.Name] = &sync.RWMutex{}
	}
	start := time.Now()
	deadline := start.Add(o.Duration)
	wctx, stop := context.WithDeadline(ctx, deadline)
	defer stop()
	var wg sync.WaitGroup
	for i, m := range c.Members {
		wg.Add(1)
		go func() {
			defer wg.Done()
			write(wctx, m, rand.New(rand.NewSource(o.Seed*31+int64(i))), section, rec, holds[m.Name], start.Add(o.Duration/3))
		}()
	}
	sched := schedule(c, kinds, o.Seed, o.Duration)
	for _, e := range sched {
		h.Schedule = append(h.Schedule, e.String())
	}
	o.Logf("chaos: seed %d, %d nodes, %s; schedule: %v", o.Seed, len(c.Members), o.Duration, h.Schedule)
	for _, e := range sched {
		if wait(wctx, start.Add(e.at)) != nil {
			break
		}
		e.apply(wctx, c, section, rec, holds, o.Logf)
	}
	<-wctx.Done()
	wg.Wait()
	if ctx.Err() != nil {
		return h, ctx.Err()
	}
	// chaos.Heal everything, see that it took and that the sessions came back,
	// then quiet: the cluster converges or the time is up.
	h.Mesh = healAll(ctx, c, rec, o.Logf)
	if ctx.Err() != nil {
		return h, ctx.Err()
	}
	o.Logf("chaos: healed; quiet for up to %s", o.Quiet)
	// The quiet ends when the nodes agree, or when they disagree and
	// nothing can change the main table any more: no writer left, and two
	// readings in a row (the tables unchanged between) show every session
	// established, every resync finished and every local update pushed to
	// every peer and acknowledged by it. A correct build sends an entry
	// only as a local update or in a resync; with none left in flight and
	// none to come, tbl (expire 10 m) holds what it will hold.
	quietFrom := time.Now()
	var last string
	agreed := func() (bool, error) {
		tables, same := tablesOf(ctx, c, section+"tbl")
		if same {
			return true, nil
		}
		why := c.Settled(ctx, section+"tbl")
		if why == "" && tables != "" && tables == last {
			if h.Mesh != nil {
				h.Mesh.Settled = time.Since(quietFrom).Round(100 * time.Millisecond).String()
			}
			o.Logf("chaos: the nodes disagree with nothing left in flight (%s into the quiet): the tables are final", time.Since(quietFrom).Round(100*time.Millisecond))
			return true, nil
		}
		last = ""
		if why == "" {
			last = tables
		}
		return false, nil
	}
	if node.Poll(ctx, o.Quiet, 500*time.Millisecond, agreed) != nil {
		// Slow is not diverged: a loaded machine gets twice the quiet
		// again before the tables are read and judged.
		o.Logf("chaos: the nodes still disagree after %s of quiet; waiting up to %s more", o.Quiet, 2*o.Quiet)
		node.Poll(ctx, 2*o.Quiet, 500*time.Millisecond, agreed)
	}
	// The short table's entries must have had time to expire.
	if w := rec.lastShort().Add(5*time.Second + chaos.OutlivedAfter + time.Second); time.Now().Before(w) {
		wait(ctx, w)
	}
	h.FinalAt = time.Now()
	h.Final, h.Unreadable = map[string]map[string]map[string]chaos.Entry{}, map[string]string{}
	for _, m := range c.Members {
		h.Final[m.Name] = map[string]map[string]chaos.Entry{}
		for _, t := range Tables {
			tb, err := m.Table(ctx, section+t.Name)
			if err != nil {
				h.Unreadable[m.Name] = err.Error()
				continue
			}
			es := map[string]chaos.Entry{}
			for _, e := range tb.Entries {
				var v int64
				fmt.Sscan(e.Data["gpc0"], &v)
				es[e.Key] = chaos.Entry{GPC0: v, ExpMS: e.Exp}
			}
			h.Final[m.Name][t.Name] = es
		}
	}
	if len(h.Unreadable) == 0 {
		h.Unreadable = nil
	}
	rec.add(chaos.Op{Kind: chaos.FinalRead, Start: h.FinalAt, End: time.Now(), OK: h.Unreadable == nil})
	sort.SliceStable(h.Ops, func(i, j int) bool { return h.Ops[i].Start.Before(h.Ops[j].Start) })
	return h, nil
}

type recorder struct {
	mu     sync.Mutex
	h      *chaos.History
	short  time.Time
	paused map[string]map[int]bool // node -> workers stopped and not yet continued
}

// pause notes a worker stopped (on) or continued (off), for healAll.
func (r *recorder) pause(node string, pid int, on bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.paused[node] == nil {
		r.paused[node] = map[int]bool{}
	}
	if on {
		r.paused[node][pid] = true
	} else {
		delete(r.paused[node], pid)
	}
}

// pausedWorkers lists the workers of a node still stopped.
func (r *recorder) pausedWorkers(node string) []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []int
	for pid := range r.paused[node] {
		out = append(out, pid)
	}
	sort.Ints(out)
	return out
}

func (r *recorder) add(op chaos.Op) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	op.ID = len(r.h.Ops) + 1
	r.h.Ops = append(r.h.Ops, op)
	if op.Table == "short" && op.End.After(r.short) {
		r.short = op.End
	}
	return op.ID
}

func (r *recorder) lastShort() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.short
}

// write is a node's writer: its own keys, by the CLI (a new value each
// time) or by traffic (an increment), 50 to 150 ms apart; the short
// table's keys only until shortUntil.
func write(ctx context.Context, m *cluster.Member, r *rand.Rand, section string, rec *recorder, hold *sync.RWMutex, shortUntil time.Time) {
	next := map[string]int64{}
	hc := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	for ctx.Err() == nil {
		hold.RLock()
		table, key := "tbl", fmt.Sprintf("%s-k%d", m.Name, r.Intn(4))
		if time.Now().Before(shortUntil) && r.Intn(5) == 0 {
			table, key = "short", fmt.Sprintf("%s-s%d", m.Name, r.Intn(2))
		}
		op := chaos.Op{Node: m.Name, Table: table, Key: key, Start: time.Now()}
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		if table == "short" || r.Intn(10) < 6 {
			next[key]++
			op.Kind, op.Value = chaos.SetCLI, next[key]*10
			err := m.Node.SetEntry(cctx, node.StatsSocket, section+table, key, fmt.Sprintf("data.gpc0 %d", op.Value))
			op.OK, op.Err = err == nil, errText(err)
		} else {
			op.Kind = chaos.IncHTTP
			// Asked each time: a restarted node may be published anew.
			addr, err := m.Node.Addr(cctx, "8080/tcp")
			var resp *http.Response
			if err == nil {
				req, _ := http.NewRequestWithContext(cctx, "GET", "http://"+addr+"/", nil)
				req.Header.Set("x-key", key)
				resp, err = hc.Do(req)
			}
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode != 200 {
					err = fmt.Errorf("HTTP %d", resp.StatusCode)
				}
			}
			op.OK, op.Err = err == nil, errText(err)
		}
		cancel()
		op.End = time.Now()
		hold.RUnlock()
		if ctx.Err() != nil && !op.OK {
			op.Err = "the run ended during the write"
		}
		rec.add(op)
		select {
		case <-ctx.Done():
		case <-time.After(time.Duration(50+r.Intn(100)) * time.Millisecond):
		}
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// event is one scheduled fault or reload.
type event struct {
	at, hold time.Duration
	kind     string
	a, b     int     // members (b: the other end of a link)
	amount   float64 // latency ms, slice bytes, reset ms
}

func (e event) String() string {
	return fmt.Sprintf("%.1fs %s node%d/node%d %.0f for %.1fs", e.at.Seconds(), e.kind, e.a+1, e.b+1, e.amount, e.hold.Seconds())
}

// schedule draws the faults and reloads from the seed: one every 1.5 to
// 3 s, each held 1 to 3 s; a reload every third event.
func schedule(c *cluster.Cluster, kinds []string, seed int64, d time.Duration) []event {
	r := rand.New(rand.NewSource(seed))
	n := len(c.Members)
	var out []event
	for at := time.Second; at < d-2*time.Second; at += time.Duration(1500+r.Intn(1500)) * time.Millisecond {
		e := event{at: at, hold: time.Duration(1000+r.Intn(2000)) * time.Millisecond, a: r.Intn(n)}
		e.b = (e.a + 1 + r.Intn(n-1)) % n
		if len(out)%3 == 2 {
			e.kind = "reload"
		} else {
			e.kind = kinds[r.Intn(len(kinds))]
		}
		switch e.kind {
		case "latency":
			e.amount = float64(100 + r.Intn(400))
		case "slicer":
			e.amount = float64(1 + r.Intn(8))
		case "reset":
			e.amount = float64(200 + r.Intn(800))
		}
		out = append(out, e)
	}
	return out
}

// apply runs one event to its end (the fault held, then healed).
func (e event) apply(ctx context.Context, c *cluster.Cluster, section string, rec *recorder, holds map[string]*sync.RWMutex, logf func(string, ...any)) {
	a, b := c.Members[e.a], c.Members[e.b]
	op := chaos.Op{Kind: chaos.Fault, Node: a.Name, Detail: e.String(), Start: time.Now()}
	var heal func() error
	var err error
	links := c.Links(a, b)
	each := func(f func(l *cluster.Link) error) error {
		for _, l := range links {
			if err := f(l); err != nil {
				return err
			}
		}
		return nil
	}
	clear := func() error {
		return each(func(l *cluster.Link) error {
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), healCall)
			defer cancel()
			return l.Restore(cctx) // toxiproxy's client has no deadline
		})
	}
	switch e.kind {
	case "reload":
		reload(ctx, a, section, rec, holds[a.Name], logf)
		return
	case "latency":
		err, heal = each(func(l *cluster.Link) error {
			return l.Latency(time.Duration(e.amount)*time.Millisecond, 50*time.Millisecond)
		}), clear
	case "slicer":
		err, heal = each(func(l *cluster.Link) error { return l.Slice(int(e.amount), int(e.amount)/2, time.Millisecond) }), clear
	case "reset":
		err, heal = each(func(l *cluster.Link) error { return l.Reset(time.Duration(e.amount) * time.Millisecond) }), clear
	case "stall":
		err, heal = each(func(l *cluster.Link) error { return l.Stall(0) }), clear
	case "partition":
		var all []*cluster.Link
		for _, o := range c.Members {
			if o != a {
				all = append(all, c.Links(a, o)...)
			}
		}
		links = all
		err, heal = each(func(l *cluster.Link) error { return l.Down() }), clear
	case "pause-node":
		err = c.Pause(ctx, a)
		heal = func() error { return c.Resume(context.WithoutCancel(ctx), a) }
	case "pause-worker":
		var pid int
		pid, err = a.PauseWorker(ctx)
		if pid != 0 {
			// Noted even when the signal's result is unknown: the final
			// heal continues it.
			rec.pause(a.Name, pid, true)
		}
		heal = func() error {
			err := a.ResumeWorker(context.WithoutCancel(ctx), pid)
			if err == nil {
				rec.pause(a.Name, pid, false)
			}
			return err
		}
	case "restart":
		hold := holds[a.Name]
		hold.Lock()
		for _, pid := range rec.pausedWorkers(a.Name) {
			rec.pause(a.Name, pid, false) // gone with the process
		}
		err = c.Restart(ctx, a, 30*time.Second)
		if err == nil {
			w := waitResync(ctx, a, section)
			op.Detail += "; " + w
		}
		hold.Unlock()
	}
	op.End, op.OK, op.Err = time.Now(), err == nil, errText(err)
	rec.add(op)
	logf("chaos: %s%s", e, map[bool]string{true: "", false: ": " + op.Err}[err == nil])
	if err != nil || heal == nil {
		return
	}
	select {
	case <-ctx.Done():
	case <-time.After(e.hold):
	}
	h := chaos.Op{Kind: chaos.Heal, Node: a.Name, Detail: e.String(), Start: time.Now()}
	herr := heal()
	h.End, h.OK, h.Err = time.Now(), herr == nil, errText(herr)
	rec.add(h)
}

// reload reloads a node whose resync finished, its writer held, and
// records the keys before and after.
func reload(ctx context.Context, m *cluster.Member, section string, rec *recorder, hold *sync.RWMutex, logf func(string, ...any)) {
	hold.Lock()
	defer hold.Unlock()
	op := chaos.Op{Kind: chaos.Reload, Node: m.Name, Start: time.Now()}
	defer func() {
		op.End = time.Now()
		rec.add(op)
		logf("chaos: reload %s: ok %v %s %s", m.Name, op.OK, op.Unmet, op.Err)
	}()
	if w := waitResync(ctx, m, section); w != "resync finished" {
		op.Unmet = "before: " + w
	}
	op.Before = keys(ctx, m, section+"tbl")
	r, err := m.Node.Reload(ctx, 20*time.Second)
	if err != nil {
		op.Err = err.Error()
		return
	}
	op.OK = true
	op.Detail = fmt.Sprintf("worker %d -> %d", r.OldPID, r.NewPID)
	if w := waitResync(ctx, m, section); w != "resync finished" && op.Unmet == "" {
		op.Unmet = "after: " + w
	}
	op.After = keys(ctx, m, section+"tbl")
}

func waitResync(ctx context.Context, m *cluster.Member, section string) string {
	pid, err := m.Node.CurrentWorker(ctx)
	if err != nil {
		return err.Error()
	}
	w := m.Node.WaitResyncFor(ctx, pid, 15*time.Second, section[:len(section)-1])
	switch {
	case w.Err != nil:
		return w.Err.Error()
	case w.Unmet != "":
		return w.Unmet
	}
	return "resync finished"
}

// keys reads the keys a node holds: a failed read is unknown (#23: it
// used to be an empty table, every key "lost by the reload").
func keys(ctx context.Context, m *cluster.Member, table string) obs.Optional[[]string] {
	t, err := m.Table(ctx, table)
	if err != nil {
		return obs.Optional[[]string]{Of: obs.From[[]string](nil, err)}
	}
	ks := []string{}
	for _, e := range t.Entries {
		ks = append(ks, e.Key)
	}
	sort.Strings(ks)
	return obs.Optional[[]string]{Of: obs.Value(ks)}
}

// Bounds of the final heal: each action is tried this many times, each
// try within healCall.
const (
	healTries = 3
	healCall  = 10 * time.Second
)

// healAll resumes every paused node and worker and clears every link,
// each action retried a bounded number of times; it records the heal (its
// errors: harp's, which make the history inconclusive), then reads back
// what the link proxy shows and waits for every peer session. Sessions
// still down with every link clear are HAProxy's: the record says which.
func healAll(ctx context.Context, c *cluster.Cluster, rec *recorder, logf func(string, ...any)) *chaos.Mesh {
	op := chaos.Op{Kind: chaos.Heal, Detail: chaos.HealEverything, Start: time.Now()}
	var errs []string
	try := func(what string, f func(ctx context.Context) error) {
		var err error
		for i := 0; i < healTries && ctx.Err() == nil; i++ {
			if i > 0 {
				wait(ctx, time.Now().Add(time.Second))
			}
			cctx, cancel := context.WithTimeout(ctx, healCall)
			err = f(cctx)
			cancel()
			if err == nil {
				return
			}
		}
		if err == nil {
			err = ctx.Err()
		}
		errs = append(errs, fmt.Sprintf("%s: %v", what, err))
	}
	for _, m := range c.Members {
		try("resuming "+m.Name, func(ctx context.Context) error {
			paused, err := c.Paused(ctx, m)
			if err != nil || !paused {
				return err
			}
			return c.Resume(ctx, m)
		})
		for _, pid := range rec.pausedWorkers(m.Name) {
			try(fmt.Sprintf("continuing %s's worker %d", m.Name, pid), func(ctx context.Context) error {
				err := m.ResumeWorker(ctx, pid)
				if err == nil {
					rec.pause(m.Name, pid, false)
				}
				return err
			})
		}
	}
	links := c.AllLinks()
	for _, l := range links {
		try("clearing link "+l.String(), l.Restore)
	}
	op.End, op.OK = time.Now(), len(errs) == 0
	op.Err = strings.Join(errs, "; ")
	rec.add(op)
	logf("chaos: healed everything: ok %v %s", op.OK, op.Err)

	mesh := &chaos.Mesh{}
	if len(links) > 0 {
		var f []string
		err := errors.New("never read")
		for i := 0; i < healTries && ctx.Err() == nil; i++ {
			cctx, cancel := context.WithTimeout(ctx, healCall)
			f, err = c.Faulted(cctx)
			cancel()
			if err == nil {
				break
			}
		}
		if err != nil && ctx.Err() != nil {
			err = fmt.Errorf("%v (the run ended: %v)", err, ctx.Err())
		}
		mesh.Faulted.Of = FaultedState(f, err)
	}
	// Sessions reconnect on HAProxy's timers (2.6 may collide and retry
	// after 5 s): polled up to the mesh timeout, the last read recorded.
	start := time.Now()
	var down []string
	var derr error
	node.Poll(ctx, cluster.MeshTimeout, 500*time.Millisecond, func() (bool, error) {
		cctx, cancel := context.WithTimeout(ctx, healCall)
		defer cancel()
		down, derr = c.SessionsDown(cctx)
		return derr == nil && len(down) == 0, nil
	})
	mesh.At, mesh.Waited = time.Now(), time.Since(start).Round(100*time.Millisecond).String()
	switch {
	case derr != nil:
		mesh.Down = obs.Failure[[]string]("%v", derr)
	case down == nil:
		mesh.Down = obs.Value([]string{})
	default:
		mesh.Down = obs.Value(down)
	}
	logf("chaos: after healing: links faulted: %s; sessions down: %s (waited %s)", describe(mesh.Faulted.Of), describe(mesh.Down), mesh.Waited)
	return mesh
}

// describe is a list observation for the log.
func describe(o obs.Of[[]string]) string {
	if o.State == "" {
		return "not read"
	}
	if why := o.Unknown(); why != "" {
		return "unknown (" + why + ")"
	}
	if v, _ := o.Get(); len(v) > 0 {
		return chaos.IDs(v, 5)
	}
	return "none"
}

// tablesOf reads every node's main table: all of them as one text (""
// when a read failed), and whether every node holds the same entries.
func tablesOf(ctx context.Context, c *cluster.Cluster, table string) (all string, same bool) {
	var texts []string
	var first string
	same = true
	for i, m := range c.Members {
		t, err := m.Table(ctx, table)
		if err != nil {
			return "", false
		}
		var got []string
		for _, e := range t.Entries {
			got = append(got, e.Key+"="+e.Data["gpc0"])
		}
		sort.Strings(got)
		held := strings.Join(got, " ")
		if i == 0 {
			first = held
		}
		same = same && held == first
		texts = append(texts, m.Name+": "+held)
	}
	return strings.Join(texts, "\n"), same
}

func wait(ctx context.Context, until time.Time) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(time.Until(until)):
		return nil
	}
}

// FaultedState is the link proxy's faulted links as read: an error (also
// a read never made, the run having ended first) is unknown, never "all
// clear" (f084f4d recorded no faulted link without reading).
func FaultedState(f []string, err error) obs.Of[[]string] {
	switch {
	case err != nil:
		return obs.Failure[[]string]("the link proxy's state: %v", err)
	case f == nil:
		return obs.Value([]string{})
	}
	return obs.Value(f)
}

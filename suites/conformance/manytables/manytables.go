// Package manytables: a peers section with a few hundred tables, entries
// only in the last ones. The initial resync completes, a node that starts
// afresh learns every entry, and a reload teaches every entry to the new
// worker; how long each takes is measured per build.
package manytables

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/harp-project/harp/harness/core/cliout"
	"github.com/harp-project/harp/harness/core/obs"
	"github.com/harp-project/harp/harness/core/resync"
	"github.com/harp-project/harp/harness/core/suite"
	"github.com/harp-project/harp/harness/core/text"
	"github.com/harp-project/harp/harness/core/verdict"
	"github.com/harp-project/harp/harness/live/cluster"
	"github.com/harp-project/harp/harness/live/node"
	"github.com/harp-project/harp/harness/live/suiteenv"
	"github.com/harp-project/harp/suites/conformance/manytables/judge"
)

var Suite = suite.Register(&suite.Suite{
	ID:       "conf-many-tables",
	Upstream: "conformance: peers sections with hundreds of tables",
	Title:    "With hundreds of tables in a peers section, resync, a fresh node and a reload all learn every entry",
	Summary:  "two nodes, TABLES tables (300), 10 entries in each of the last 10: initial resync finishes, a restarted node learns every entry, a reloaded worker is taught every entry; durations measured",
	Labels:   []string{"area:conformance", "area:peers"},
	Trials:   len(Kinds),
	Noun:     "checks",
	Params: []suite.Param{
		suite.Int("TABLES", 300, 20, 1000, "tables in the peers section (entries go in the last 10)"),
		suite.Duration("BOUND", 60*time.Second, "how long each resync or lesson may take"),
	},
	StepsFor: func(p suite.Values) []string {
		n := p.Int("TABLES")
		return []string{
			fmt.Sprintf("Setup: two nodes A (node1) and B (node2), one peers section naming both with %d tables t0001..t%04d (type string len 32, size 10k, expire 1h, store gpc0).", n, n),
			fmt.Sprintf("initial resync: from the nodes' start, both links established and both sections' resync finished (`show peers` flags 0x1|0x2) within BOUND (%s); then 10 entries written on A in each of t%04d..t%04d reach B.", p.Duration("BOUND"), n-9, n),
			"a fresh node learns: B restarted afresh; it must hold all 100 entries with their gpc0 and report its resync finished within BOUND (entries it lacks say nothing, INCONCLUSIVE, when its link to A came up past HAProxy's 5 s resync timeout, by show proc's uptime and show peers' last_hdshk: B asks no one again after it).",
			"a reload teaches: SIGUSR2 to A's master; the new worker must hold all 100 entries and report its resync finished within BOUND.",
			"When entries are missing, the wait ends before BOUND at the first table reading begun after the learner showed its resync finished (for B, with its link to A up within the resync timeout): a teacher sends every entry before it marks the lesson finished and none of them again afterwards, so a correct build holds them all by then, and a missing entry cannot come any more.",
			"Each check records how long it took (in the notes and evidence).",
		}
	},
	Run:       run,
	NoRegTest: "two nodes resyncing hundreds of tables, judged once the resync ends and by its duration: VTest has no poll and no clock to measure with",
})

// Kinds in trial order (TRIALS=6 runs each twice).
var Kinds = []string{"initial resync", "a fresh node learns", "a reload teaches"}

// Evidence is what one check recorded.
type Evidence struct {
	Facts judge.Facts `json:"facts"`
}

func run(ctx context.Context, env *suiteenv.Env) verdict.Outcome {
	n := env.Params.Int("TABLES")
	bound := env.Params.Duration("BOUND")
	var tables []cluster.Table
	for _, name := range text.Numbered("t%04d", n) {
		tables = append(tables, cluster.Table{Name: name, Type: "string len 32", Store: "gpc0"})
	}
	t0 := time.Now()
	c, unmet, err := env.StartCluster(ctx, cluster.Options{Nodes: cluster.Nodes(2), Tables: tables}, false)
	if c == nil {
		return verdict.Outcome{Unmet: unmet, Err: err}
	}
	last := holdings(tables[n-10:])
	return env.RunTrials(ctx, func(ctx context.Context, t *verdict.Trial) error {
		kind := Kinds[(t.N-1)%len(Kinds)]
		ev := &Evidence{Facts: judge.Facts{Kind: kind, Tables: n, Entries: len(last) * perTable, Bound: bound}}
		t.Evidence = ev
		f := &ev.Facts
		defer func() {
			t.Violation, t.Unmet = judge.Check(*f)
			t.Checks = verdict.KindCheck(kind, t.Violation, t.Unmet) // a bug may break one kind alone (teaching past max-updates-at-once)
		}()
		a, b := c.Members[0], c.Members[1]
		if kind != "initial resync" { // the later checks start from what it left: meshed nodes, A holding every entry
			if f.Setup = ready(ctx, c, a, last, bound); f.Setup != "" {
				return nil
			}
		}
		t1 := time.Now()
		switch kind {
		case "initial resync":
			if t.N == 1 { // the first check times the nodes' initial resync from their start
				f.Mesh = obs.Opt(c.Meshed(ctx, bound))
				f.Took = time.Since(t0)
			} else {
				f.Mesh = obs.Opt(c.Meshed(ctx, cluster.MeshTimeout))
			}
			if down, ok := f.Mesh.Get(); !ok || len(down) > 0 {
				return nil
			}
			if err := setHoldings(ctx, a.Node, node.StatsSocket, "gpc0", last); err != nil {
				f.Setup = fmt.Sprintf("writing on %s: %v", a.Name, err)
				return nil
			}
			var miss obs.Of[map[string]int]
			miss, f.LearnTook = waitHoldings(ctx, b.Node, node.StatsSocket, "gpc0", last, bound, nil)
			f.Missing = obs.Opt(miss)
			t.Notef("initial resync of %d tables finished on both nodes %s after start; %d entries written on A reached B in %s", n, f.Took.Round(time.Millisecond), f.Entries, f.LearnTook.Round(time.Millisecond))
		case "a fresh node learns":
			if err := c.Restart(ctx, b, 30*time.Second); err != nil {
				f.Setup = "restarting B: " + err.Error()
				return nil
			}
			// B's lesson is over once its resync shows finished with its
			// link to A up in time: a link up past the resync timeout
			// finishes it untaught, and A may still push afterwards.
			learn(ctx, f, b.Node, node.StatsSocket, node.Current, last, t1, func() bool {
				if !finished(ctx, b.Node, node.Current, c.Section) {
					return false
				}
				uptime, hdshk, err := b.Node.LinkAge(ctx, c.Section, a.Name)
				return err == nil && resync.LateLink("B", "A", uptime, hdshk) == ""
			})
			f.Setup = lateLink(ctx, c, a, b, f)
			t.Notef("B restarted afresh: %s of %d entries learnt, resync %s, %s after the restart began", learnt(f), f.Entries, orFinished(f.Resync.Of), f.Took.Round(time.Millisecond))
		case "a reload teaches":
			r, err := a.Node.Reload(ctx, 20*time.Second)
			if err != nil {
				f.Setup = "reloading A: " + err.Error()
				return nil
			}
			learn(ctx, f, a.Node, r.NewPID, r.NewPID, last, t1, func() bool { return finished(ctx, a.Node, r.NewPID, c.Section) })
			t.Notef("A reloaded: new worker %d holds %s of %d entries, resync %s, %s after SIGUSR2", r.NewPID, learnt(f), f.Entries, orFinished(f.Resync.Of), f.Took.Round(time.Millisecond))
		}
		return nil
	})
}

func learnt(f *judge.Facts) string {
	return obs.Text(f.Missing.Of, func(m map[string]int) string { return fmt.Sprint(f.Entries - text.Sum(m)) })
}

const perTable = 10

// holdings are what the last tables hold: perTable keys in each, every
// gpc0 value distinct.
func holdings(tables []cluster.Table) []holding {
	var hs []holding
	for ti, tb := range tables {
		h := holding{Table: "cluster/" + tb.Name}
		for i := range perTable {
			h.Keys = append(h.Keys, fmt.Sprintf("mt-%02d", i))
			h.Values = append(h.Values, fmt.Sprint(ti*perTable+i+1))
		}
		hs = append(hs, h)
	}
	return hs
}

// ready: before a check, the nodes are meshed and A holds every entry.
func ready(ctx context.Context, c *cluster.Cluster, a *cluster.Member, last []holding, bound time.Duration) string {
	if u := c.WaitMesh(ctx, bound); u != "" {
		return "before the check: " + u
	}
	miss, _ := waitHoldings(ctx, a.Node, node.StatsSocket, "gpc0", last, time.Second, nil)
	if m, ok := miss.Get(); !ok {
		return "before the check: " + miss.Unknown()
	} else if len(m) > 0 {
		return fmt.Sprintf("before the check A lacks entries it wrote (%s): the initial resync check must run first", judge.PerTableText(m))
	}
	return ""
}

// learn records what a worker learnt within the bound from t1: every
// entry (read on pid), then its resync finished (on resyncPID; "" finished,
// unknown when show peers kept failing). The wait for entries ends early
// once taught says the lesson is over: a teacher sends every entry before
// it marks the resync finished, and sends none of them again afterwards,
// so what a reading begun after that lacks is lacking for good.
func learn(ctx context.Context, f *judge.Facts, n *node.Node, pid, resyncPID int, last []holding, t1 time.Time, taught func() bool) {
	miss, waited := waitHoldings(ctx, n, pid, "gpc0", last, f.Bound, taught)
	f.Missing = obs.Opt(miss)
	f.Resync = obs.Opt(n.WaitResyncFor(ctx, resyncPID, max(time.Until(t1.Add(f.Bound)), time.Second), "cluster").Observed())
	f.Took = time.Since(t1)
	if m, ok := miss.Get(); ok && text.Sum(m) > 0 && waited < f.Bound {
		f.FinalAfter = waited
	}
}

// finished says whether worker pid shows the section's resync finished
// (false when show peers could not be read: the wait goes on).
func finished(ctx context.Context, n *node.Node, pid int, section string) bool {
	secs, err := n.Peers(ctx, pid)
	if err != nil {
		return false
	}
	s, ok := cliout.FindSection(secs, section)
	return ok && s.ResyncFinished()
}

// lateLink is why entries a restarted B lacks say nothing ("" when they
// do, or none is missing): its link to A came up after its resync
// timeout (resync.LateLink), or when it did could not be read.
func lateLink(ctx context.Context, c *cluster.Cluster, a, b *cluster.Member, f *judge.Facts) string {
	if m, ok := f.Missing.Get(); !ok || text.Sum(m) == 0 {
		return ""
	}
	uptime, hdshk, err := b.Node.LinkAge(ctx, c.Section, a.Name)
	if err != nil {
		return "B lacks entries, and whether its link to A came up before its resync timeout is unknown: B's " + err.Error()
	}
	return resync.LateLink("B", "A", uptime, hdshk)
}

func orFinished(o obs.Of[string]) string {
	return obs.Text(o, func(s string) string { return cmp.Or(s, "finished") })
}

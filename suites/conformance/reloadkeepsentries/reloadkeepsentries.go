// Package reloadkeepsentries: a reload keeps every stick-table entry. The old
// worker teaches the new one its tables through the local peer, whatever
// the peers section holds besides (other sections, a remote peer up or
// down), however soon after start, however many entries, and whichever
// way the reload is asked for.
package reloadkeepsentries

import (
	_ "embed"

	"context"
	"fmt"
	"time"

	"github.com/harp-project/harp/harness/core/cliout"
	"github.com/harp-project/harp/harness/core/config"
	"github.com/harp-project/harp/harness/core/obs"
	"github.com/harp-project/harp/harness/core/resync"
	"github.com/harp-project/harp/harness/core/suite"
	"github.com/harp-project/harp/harness/core/text"
	"github.com/harp-project/harp/harness/core/verdict"
	"github.com/harp-project/harp/harness/live/node"
	"github.com/harp-project/harp/harness/live/suiteenv"
	"github.com/harp-project/harp/suites/conformance/reloadkeepsentries/judge"
)

// configTemplate is the suite's config, next to it (conf-reload-keeps-entries.cfg.tmpl); the shared
// blocks (the global section) come from fixtures/templates.
//
//go:embed conf-reload-keeps-entries.cfg.tmpl
var configTemplate string

var Suite = suite.Register(&suite.Suite{
	ID:       "conf-reload-keeps-entries",
	Upstream: "conformance: stick tables survive a reload",
	Title:    "A reload keeps every stick-table entry, with its data",
	Summary:  "7 kinds of reload (one or three sections, remote peer up or down, right after start or long after, 10,000 entries, master CLI): the new worker holds every entry and says its resync finished",
	Labels:   []string{"area:conformance", "area:peers"},
	Trials:   len(Kinds),
	Noun:     "reloads",
	Params:   []suite.Param{suite.Variants("KINDS", "the kinds of reload to run", Kinds, slug, "kind of reload")},
	Steps: []string{
		"Setup, for each trial a fresh node (nbthread 1, localpeer harp) whose config the trial's kind gives: one peers section holding only the local peer, or three such sections, or one section with a remote peer that harp's own peers client plays (up) or that nobody answers (down); each section has a table `t` (type string len 32, size 20k, expire 1h, store gpc0).",
		"Kinds, one per trial in this order (TRIALS=14 runs each twice; KINDS= picks some): " + suiteenv.List(Kinds, func(k Kind) string { return fmt.Sprintf("%s (%s)", k.Name, k.Slug) }, ", ") + ".",
		"Before the reload: the old worker's sections report their initial resync finished (`show peers` flags 0x1|0x2), except right after start: sections with no remote peer have nobody to wait for, a correct build finishes at once (upstream 4b1a7ea66), so that reload does not wait for it (2.6.12 waits its 5 s timeout) and what the old worker showed is recorded; the remote peer, when up, is established; the entries (k00000..., gpc0 = 1 + index mod 997) are written with `set table` and every one read back with `show table`; the worker's age is surely below 5 s for 'right after start' (when the signal was sent: time since harp started the node, or `show proc` uptime + 1 s + time since it was read, whichever is less) and surely above 6 s for 'long after start' (`show proc` uptime).",
		"Trigger: SIGUSR2 to the master (the master CLI `reload` for that kind); wait until `show proc` lists the new worker and the old one left.",
		"Expectation: the new worker's sections report their resync finished within 20 s, and every table holds every entry with its gpc0.",
	},
	Run:       run,
	NoRegTest: "a worker's entries across a reload, judged once the new worker says its resync finished (a remote peer up or down, 10,000 entries): VTest has no poll until a state settles",
})

// Kind is one variant of the property, run as its own trials.
type Kind struct {
	Slug     string // what KINDS= calls it
	Name     string
	Sections int
	Remote   string // "": none, "up": harp's peers client, "down": nobody answers
	Entries  int    // per section
	How      node.How
	MaxAge   time.Duration // the reload must come before the worker is this old
	MinAge   time.Duration // ... or after it is this old
}

// Kinds in trial order. "Right after start" reloads before HAProxy's
// initial resync timeout could pass, "long after" once it has.
var Kinds = []Kind{
	{Slug: "early", Name: "right after start", Sections: 1, Entries: 100, How: node.BySignal, MaxAge: resync.Timeout},
	{Slug: "late", Name: "long after start", Sections: 1, Entries: 100, How: node.BySignal, MinAge: resync.Timeout + time.Second},
	{Slug: "sections", Name: "three sections", Sections: 3, Entries: 100, How: node.BySignal},
	{Slug: "remote-up", Name: "remote peer up", Sections: 1, Remote: "up", Entries: 100, How: node.BySignal},
	{Slug: "remote-down", Name: "remote peer down", Sections: 1, Remote: "down", Entries: 100, How: node.BySignal},
	{Slug: "10k", Name: "10,000 entries", Sections: 1, Entries: 10000, How: node.BySignal},
	{Slug: "master-cli", Name: "master CLI reload", Sections: 1, Entries: 100, How: node.ByMasterCLI},
}

func slug(k Kind) string { return k.Slug }

// Selected are the kinds KINDS names, in trial order.
func Selected(v string) ([]Kind, error) { return suite.Pick(v, Kinds, slug, "kind of reload") }

const (
	localPeer     = "harp"
	remotePeer    = "remote"
	peerPort      = 10000
	waitResync    = 20 * time.Second // 2.6 finishes only after its 5 s timeout
	reloadTimeout = 20 * time.Second
)

// Config renders a kind's config.
func Config(k Kind) (string, error) {
	secs := config.Sections(sections(k), peerPort)
	return config.RenderText("conf-reload-keeps-entries.cfg.tmpl", configTemplate, map[string]any{"Threads": 1, "LocalPeer": localPeer, "Sections": secs, "Remote": k.Remote != "", "RemotePeer": remotePeer})
}

// sections are a kind's peers sections, s1, s2, ...; tables their table t.
func sections(k Kind) []string { return text.Numbered("s%d", k.Sections) }
func tables(k Kind) []string   { return text.Numbered("s%d/t", k.Sections) }

// Evidence is what one reload recorded.
type Evidence struct {
	Kind   string      `json:"kind"`
	Reload node.Reload `json:"reload"`
	Facts  judge.Facts `json:"facts"`
}

func run(ctx context.Context, env *suiteenv.Env) verdict.Outcome {
	return suiteenv.RunPicked(ctx, env, "KINDS", Selected, func(ctx context.Context, t *verdict.Trial, k Kind, _ int) error {
		return trial(ctx, env, t, k)
	})
}

// trial is one reload of kind k on a fresh node. The judge is deferred:
// every return is judged on the facts gathered so far.
func trial(ctx context.Context, env *suiteenv.Env, t *verdict.Trial, k Kind) error {
	ev := &Evidence{Kind: k.Name, Facts: judge.Facts{Kind: k.Name, Sections: k.Sections, Entries: k.Entries, MaxAge: k.MaxAge, MinAge: k.MinAge}}
	t.Evidence = ev
	f := &ev.Facts
	defer func() { t.Checks, t.Violation, t.Unmet, t.Remark = judge.ReloadChecks(*f, k.Slug) }()
	cfg, err := Config(k)
	if err != nil {
		return err
	}
	o := node.Options{Config: cfg, Name: fmt.Sprintf("node%d", t.N)}
	if k.Remote == "up" {
		o.Ports = []string{fmt.Sprintf("%d/tcp", peerPort)}
	}
	t0 := time.Now() // before the container: no worker is older than this
	n, unmet, err := env.StartNode(ctx, o, 1)
	if n == nil {
		f.Setup = unmet
		return err
	}
	defer env.StopNode(context.WithoutCancel(ctx), n) // the next trial starts its own
	old, err := n.CurrentWorker(ctx)
	if err != nil {
		return err
	}
	if k.Remote == "up" { // harp's peers client plays it, a session kept up throughout
		stop, unmet := keepUpOn(ctx, n, fmt.Sprintf("%d/tcp", peerPort), "s1", localPeer, remotePeer, 10*time.Second)
		defer stop()
		f.RemoteBefore = unmet
	}
	if ready, err := before(ctx, n, old, k, f); !ready || err != nil {
		return err
	}
	r, done, err := reload(ctx, n, old, k, f, t0)
	if ev.Reload = r; !done || err != nil {
		return err
	}
	t.Notef("%s: %d entries in %d section(s), worker %d aged %s; new worker %d listed %s after the %s", k.Name, k.Entries*k.Sections, k.Sections, old, f.Age.Round(time.Millisecond), r.NewPID, r.NewUp.Round(time.Millisecond), k.How)
	return after(ctx, n, r, k, f, t)
}

// before brings the old worker to the kind's state: its resync (finished,
// or recorded where it is part of the property), its age for "long
// after start", and every entry written and read back. False when a
// precondition was not met (recorded in f).
func before(ctx context.Context, n *node.Node, old int, k Kind, f *judge.Facts) (bool, error) {
	if k.MaxAge > 0 && k.Remote == "" {
		// With no remote peer a correct build finishes its resync at once
		// (upstream 4b1a7ea66), so right after start that is part of the
		// property, not a precondition: the reload comes while the worker
		// is young, finished or not (2.6.12 waits its 5 s timeout, and a
		// reload then loses every entry). What the old worker showed is
		// recorded.
		if secs, err := n.Peers(ctx, old); err == nil {
			f.OldFinished = obs.Opt(obs.Value(cliout.AllResynced(secs)))
		}
	} else {
		// Elsewhere a correct build always meets it: a remote peer up
		// answers at once, one down leaves the 5 s timeout, and "long
		// after start" is past it.
		_, unmet, err := n.WaitResync(ctx, old, waitResync, sections(k)...)
		if err != nil {
			return false, err
		}
		f.ResyncBefore = unmet
	}
	if f.ResyncBefore != "" || f.RemoteBefore != "" {
		return false, nil
	}
	if err := waitWorkerAge(ctx, n, old, k.MinAge); err != nil { // "long after start" only
		return false, err
	}
	keys, vals := entries(k.Entries)
	back, unmet, err := setAndReadBack(ctx, n, node.StatsSocket, old, tables(k), "gpc0", keys, vals) // on the stats socket: only one worker runs, the reload comes after
	if f.Setup = unmet; err != nil || unmet != "" {
		return false, err
	}
	f.WrittenBefore = k.Entries*k.Sections - back.Bad()
	return true, nil
}

// reload asks for the reload once the worker's age fits the kind, and
// records that age; not done when it does not fit, or every entry was
// not there before, or the reload was not carried out (recorded in f, the
// reload as far as it went).
func reload(ctx context.Context, n *node.Node, old int, k Kind, f *judge.Facts, t0 time.Time) (r node.Reload, done bool, err error) {
	// The worker's age when the signal reached it, bounded (workerAge):
	// estimated here (ReloadBy asks show proc first), measured once the
	// signal is sent.
	age, err := ageOf(ctx, n, old, t0)
	if err != nil {
		return r, false, err
	}
	f.Age = max(age.Uptime, 0) // whole seconds: at most the true age
	f.AgeBound = age.bound(time.Now().Add(500 * time.Millisecond))
	if f.WrittenBefore != k.Entries*k.Sections || (k.MaxAge > 0 && f.AgeBound >= k.MaxAge) || (k.MinAge > 0 && f.Age < k.MinAge) {
		return r, false, nil
	}
	if r, err = n.ReloadBy(ctx, k.How, reloadTimeout); err != nil {
		f.ReloadErr = err.Error()
		return r, false, nil
	}
	f.AgeBound = age.bound(r.Sent)
	return r, true, nil
}

// after reads what the new worker says of its resync, the master's log
// (a new worker that died, an old one that crashed teaching), and every
// entry in the new worker's tables.
func after(ctx context.Context, n *node.Node, r node.Reload, k Kind, f *judge.Facts, t *verdict.Trial) error {
	w := n.WaitResyncFor(ctx, r.NewPID, waitResync, sections(k)...)
	if w.Err != nil {
		return w.Err
	}
	f.ResyncAfter = obs.Opt(w.Observed())
	t.Note(judge.FlagNotes("new worker", w.Sections)...)
	if exits, err := n.Exits(ctx); err == nil {
		f.Died, f.OldCrash = judge.ReloadDeaths(exits, r.OldPID)
	}
	if f.OldCrash != "" {
		t.Notef("the old worker %d %s", r.OldPID, f.OldCrash)
	}
	keys, vals := entries(k.Entries)
	f.Loss = obs.Opt(tableLoss(ctx, n, r.NewPID, tables(k), "gpc0", keys, vals))
	return nil
}

// entries are the keys (k00000...) and gpc0 values (1 + index mod 997)
// of entries 0..count-1.
func entries(count int) (keys, gpc0 []string) {
	for i := range count {
		keys, gpc0 = append(keys, fmt.Sprintf("k%05d", i)), append(gpc0, fmt.Sprint(1+i%997))
	}
	return keys, gpc0
}

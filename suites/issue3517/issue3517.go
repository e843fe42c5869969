// Package issue3517 encodes haproxy/haproxy#3517: "Multiple peers sections
// lose stick tables on reload (shared dont_stop state)". The stopping
// process holds itself alive ("do not stop") until the new process has
// learnt its tables; with the latch shared by all peers sections, only one
// section teaches the new process.
package issue3517

import (
	_ "embed"

	"context"
	"fmt"
	"time"

	"github.com/harp-project/harp/harness/core/cliout"
	"github.com/harp-project/harp/harness/core/config"
	"github.com/harp-project/harp/harness/core/obs"
	"github.com/harp-project/harp/harness/core/suite"
	"github.com/harp-project/harp/harness/core/verdict"
	"github.com/harp-project/harp/harness/live/node"
	"github.com/harp-project/harp/harness/live/suiteenv"
	"github.com/harp-project/harp/suites/issue3517/judge"
)

// configTemplate is the suite's config, next to it (3517.cfg.tmpl); the shared
// blocks (the global section) come from fixtures/templates.
//
//go:embed 3517.cfg.tmpl
var configTemplate string

var Suite = suite.Register(&suite.Suite{
	ID:       "3517",
	Upstream: "haproxy/haproxy#3517",
	Title:    "Multiple peers sections lose stick tables on reload (shared dont_stop state)",
	Summary:  "two peers sections, a marker in each table, 3 SIGUSR2 reloads: both markers must survive",
	Labels:   []string{"area:peers"},
	Trials:   3,
	Noun:     "reloads",
	Params: []suite.Param{
		suite.Int("SECTIONS", 2, 1, 200, "peers sections, each with its marker table (the issue needs 2; more measure how the cost grows)"),
		suite.Int("PARALLEL", 3, 1, 10, "nodes whose reloads run side by side (the trials spread over them)"),
	},
	StepsFor: func(p suite.Values) []string {
		return []string{
			fmt.Sprintf("Setup: %s, nbthread 1, localpeer set; %s, each holding only the local peer on its own loopback port and a table `marker` (type ip, size 100, expire 1h, store gpc0).", suiteenv.LanesText(p.Int("PARALLEL"), "reload"), sectionsText(p.Int("SECTIONS"))),
			"Before each reload: wait until every section reports its initial resync finished (`show peers` flags 0x1|0x2), then `set table <section>/marker key 192.0.2.1 data.gpc0 1` in each and check every entry is there.",
			"Trigger: SIGUSR2 to the master; wait until `show proc` lists the new worker and the old one has left (or 20 s passed).",
			"Decided at once when the old worker was seen leaving and every marker table of the new worker could be read: no section has a remote peer, so the old worker was the only process that could teach a section its marker; once it is gone a missing marker can never come, and a correct build's old worker leaves only after handing over every section, so both markers are there at that moment. Only when the old worker was not seen leaving, or a table could not be read, does the round wait (up to 20 s) for the new worker's sections to report resync finished, and read again.",
			"Expectation: every table still holds 192.0.2.1 with gpc0=1 in the new worker.",
		}
	},
	WhenUnmet: "A resync that stays unfinished with its flags unchanged for the last 10 s of its 20 s wait is the build's own state: the run stops at that reload (lasting). " +
		"Without the resync flag, a new worker holding one section's marker and not the other's still shows the bug's asymmetry: a weak observation, never a verdict.",
	Run: run,
})

const (
	key           = "192.0.2.1"
	resyncTimeout = 20 * time.Second // 2.6 finishes its initial resync only after its 5 s timeout
)

func sectionsText(n int) string {
	switch n {
	case 1:
		return "one peers section `first` (a control: the issue needs two)"
	case 2:
		return "peers sections `first` and `second`"
	}
	return fmt.Sprintf("%d peers sections (`first`, `second`, `s3` ... `s%d`)", n, n)
}

// ConfigFor renders the configuration with n sections, each on its own
// loopback port from 10000.
func ConfigFor(n int) (string, error) {
	ss := config.Sections(judge.Sections(n), 10000)
	return config.RenderText("3517.cfg.tmpl", configTemplate, map[string]any{"Threads": 1, "LocalPeer": "harp", "Sections": ss})
}

// Evidence is what one round recorded, for the report and the self-tests.
type Evidence struct {
	Reload      node.Reload           `json:"reload"`
	PeersBefore []cliout.PeersSection `json:"peers_before,omitempty"`
	PeersAfter  []cliout.PeersSection `json:"peers_after,omitempty"`
	Facts       *judge.Facts          `json:"facts,omitempty"` // what the new worker held
	// DecidedAfter is when the round's facts were complete, from the
	// signal; DecidedBy says what completed them.
	DecidedAfter time.Duration `json:"decided_after_signal_ns,omitempty"`
	DecidedBy    string        `json:"decided_by,omitempty"`
}

func run(ctx context.Context, env *suiteenv.Env) verdict.Outcome {
	count := env.Params.Int("SECTIONS")
	cfg, err := ConfigFor(count)
	if err != nil {
		return verdict.Outcome{Err: err}
	}
	nodes, unmet, err := env.StartNodes(ctx, min(env.Params.Int("PARALLEL"), env.Trials), node.Options{Config: cfg}, 1)
	if nodes == nil {
		return verdict.Outcome{Unmet: unmet, Err: err}
	}
	sections, tables := judge.Sections(count), judge.TablesFor(count)
	return env.RunTrialsOn(ctx, nodes, func(ctx context.Context, n *node.Node, t *verdict.Trial) error {
		return trial(ctx, n, t, sections, tables)
	})
}

func trial(ctx context.Context, n *node.Node, t *verdict.Trial, sections, tables []string) error {
	ev := &Evidence{}
	t.Evidence = ev
	old, err := n.CurrentWorker(ctx)
	if err != nil {
		return err
	}
	// Precondition: both sections finished their initial resync, else the
	// old process would have nothing to teach and the round means nothing.
	w := n.WaitResyncFor(ctx, old, resyncTimeout, sections...)
	if ev.PeersBefore = w.Sections; w.Err != nil || w.Unmet != "" {
		t.Unmet, t.Lasting = "before reload: "+w.Unmet, w.Stuck
		return w.Err
	}
	for _, tb := range tables { // setup: the marker in every table, checked
		if err := node.RefusalUnmet(n.SetEntry(ctx, old, tb, key, "data.gpc0 1"), &t.Unmet); err != nil || t.Unmet != "" {
			return err // a refusal is unmet, any other error harp's
		}
		if bad := judge.Bad(ReadMarker(ctx, n, old, tb)); bad != "" {
			t.Unmet = fmt.Sprintf("before reload: %s: %s", tb, bad)
			return nil
		}
	}
	ev.Reload, err = n.Reload(ctx, judge.ReloadTimeout) // trigger
	if err != nil {
		t.Unmet = "reload: " + err.Error()
		return nil
	}
	r := ev.Reload
	t.Note(reloadNotes(r, node.BySignal, judge.ReloadTimeout)...)
	// The information limit: with the old worker gone, what the new one
	// holds is final (the steps say why). No resync wait then.
	if f := after(ctx, n, r, tables); judge.Decided(*f) {
		ev.Facts, ev.DecidedAfter, ev.DecidedBy = f, time.Since(r.Sent), "the old worker left"
		t.Notef("decided %s after the signal: %s, and every marker table was read", ev.DecidedAfter.Round(time.Millisecond), ev.DecidedBy)
		// For the report: the new worker's sections as they are now (one
		// read, which decides nothing).
		if ps, err := n.Peers(ctx, r.NewPID); err == nil {
			ev.PeersAfter = ps
			t.Note(judge.LocalPeerNotes(ps)...)
		} else {
			t.Notef("show peers after the reload, for the report: %v", err)
		}
		return judged(ctx, n, t, ev)
	}
	// The new worker has learnt what it will once both resyncs are over.
	w = n.WaitResyncFor(ctx, r.NewPID, resyncTimeout, sections...)
	if ev.PeersAfter = w.Sections; w.Err != nil || w.Unmet != "" {
		// A resync that stopped is the build's own doing: every later
		// reload would start the same way (Lasting). What the new worker
		// holds still tells the bug's asymmetry apart (Weak).
		t.Unmet, t.Lasting = "after reload: "+w.Unmet, w.Stuck
		if w.Err == nil {
			ev.Facts = after(ctx, n, r, tables)
			t.Weak = judge.Weak(*ev.Facts)
		}
		return w.Err
	}
	t.Note(judge.LocalPeerNotes(ev.PeersAfter)...)
	ev.Facts, ev.DecidedBy = after(ctx, n, r, tables), "the new worker's resync finished"
	ev.DecidedAfter = time.Since(r.Sent)
	return judged(ctx, n, t, ev)
}

// judged is the round's verdict from its facts.
func judged(ctx context.Context, n *node.Node, t *verdict.Trial, ev *Evidence) error {
	if crash, _ := ev.Facts.Ends(); crash != "" {
		t.Notef("%s", crash)
	}
	t.Violation, t.Unmet, t.Remark = judge.Round(*ev.Facts)
	return suiteenv.StopIfGone(ctx, n, nil)
}

// ReadMarker reads the marker entry of one table on one worker.
func ReadMarker(ctx context.Context, n *node.Node, pid int, table string) obs.Of[judge.Marker] {
	e, present, err := n.Entry(ctx, pid, table, key)
	return obs.From(judge.Marker{Present: present, GPC0: e.Data["gpc0"]}, err)
}

// after reads what the new worker holds, then the master's log (after the
// tables: a crash during the checks is seen).
func after(ctx context.Context, n *node.Node, r node.Reload, tables []string) *judge.Facts {
	f := &judge.Facts{OldPID: r.OldPID, OldExited: r.OldExited, Tables: tables, Markers: map[string]obs.Of[judge.Marker]{}}
	for _, tb := range tables {
		f.Markers[tb] = ReadMarker(ctx, n, r.NewPID, tb)
	}
	f.Exits = obs.From(n.Exits(ctx))
	return f
}

// Package failedreload: a reload with a config that cannot load changes
// nothing (the old worker keeps serving with its tables, the master says
// the reload failed and keeps taking signals), and the next reload with a
// good config works, by SIGUSR2 and by the master CLI.
package failedreload

import (
	_ "embed"

	"context"
	"fmt"
	"time"

	"github.com/harp-project/harp/harness/core/cliout"
	"github.com/harp-project/harp/harness/core/config"
	"github.com/harp-project/harp/harness/core/obs"
	"github.com/harp-project/harp/harness/core/suite"
	"github.com/harp-project/harp/harness/core/text"
	"github.com/harp-project/harp/harness/core/verdict"
	"github.com/harp-project/harp/harness/live/load"
	"github.com/harp-project/harp/harness/live/node"
	"github.com/harp-project/harp/harness/live/suiteenv"
	"github.com/harp-project/harp/suites/conformance/failedreload/judge"
)

// configTemplate is the suite's config, next to it (conf-failed-reload.cfg.tmpl); the shared
// blocks (the global section) come from fixtures/templates.
//
//go:embed conf-failed-reload.cfg.tmpl
var configTemplate string

var Suite = suite.Register(&suite.Suite{
	ID:       judge.SuiteID,
	Upstream: "conformance: master-worker reloads that fail",
	Title:    "A reload with a config that cannot load changes nothing, and the next reload works",
	Summary:  "10 failure/recovery cycles on one node (a missing map file, a syntax error, an unknown keyword, a syntax error after a peers section, a bind to an address the node does not have; recovery by SIGUSR2 and by the master CLI): the old worker keeps serving with its table, show proc counts the failure, the master keeps taking signals, the next good reload starts a new worker",
	Labels:   []string{"area:conformance", "area:mworker"},
	Trials:   len(Breaks) * 2,
	Noun:     "cycles",
	Params: []suite.Param{suite.Duration("BOUND", 20*time.Second, "how long show proc may take to count a failed reload, and a good reload to start a new worker (observed: under 200 ms)"),
		suite.Variants("BREAKS", "the breaks to cycle through (a bisect of one finding runs only its break)", Breaks, breakID, "break")},
	Steps: []string{
		"Setup: one node, nbthread 2; an HTTP frontend on 8080 answering 200 and tracking its x-key header in backend `tbl`'s stick table (type string len 32, expire 1h, store gpc0).",
		"Before each cycle: the current worker answers HTTP 200; `set table tbl key keep-N data.gpc0 N` on it; the master's `show proc` failed-reload counter is read.",
		"Trigger: the config is replaced by one that cannot load, each break once per round (a map file that does not exist; an unterminated quote; an unknown keyword; an unterminated quote after a peers section; a bind to 192.0.2.10, an address no node has), then SIGUSR2 to the master. Checked first: the build's `haproxy -c` must refuse it, except the bind, which `haproxy -c` must accept and which, started alone, must fail on that bind.",
		"When the count is decided: as soon as `show proc` counts one more failed reload, or as soon as a `show proc` read begins after the master logged that the reload failed (`Loading failure!` up to 3.0, `Failed to load worker` or `Master failed to parse new configuration` from 3.1). Each of those lines is printed once the master has set the count it keeps until the next reload (counted, or reset by 3.1's loop entry), and a master answers its CLI only from its loop, after them: no later reading can differ, on a correct build as on one that does not count. Where neither shows, the wait runs to BOUND (20 s); a master seen gone ends it.",
		"Expectation, once the count is decided: the same worker is still the current one and answers HTTP 200, its table still holds keep-N with gpc0 N, and the master does not block or leave pending SIGUSR2 (/proc/<master>/status SigBlk, SigPnd, ShdPnd, recorded).",
		"Recovery: the good config is written back and the node reloaded, by SIGUSR2 in the first round and by the master CLI `reload` in the second: a new worker must be listed within BOUND, and answer HTTP 200.",
	},
	Run:      run,
	RegTests: RegTests,
})

// Break is one way a config cannot load: a line added to the frontend.
// ID is its part of a check id (master-survives.syntax-error): the same
// check can fail on one break only, as the master's crash does.
type Break struct {
	ID   string
	Name string
	Line string
	// Peers: the broken config also has a peers section (its local peer
	// and a table), parsed before the error.
	Peers bool
	// FailsOnBind: the config parses (haproxy -c accepts it) and fails
	// only when started, on a bind to this host, which no address of the
	// node's is ("": it does not parse).
	FailsOnBind string
}

// Breaks in cycle order.
var Breaks = []Break{
	{"missing-map", "a missing map file", "http-request set-header x-m %[req.hdr(host),map(/etc/harp/absent.map)]", false, ""},
	{"syntax-error", "a syntax error", `http-request set-header x-a "unterminated`, false, ""},
	{"unknown-keyword", "an unknown keyword", "frobnicate yes", false, ""},
	// Upstream 035058e8bfe4: the master crashed when a reload failed
	// after a peers section was parsed.
	{"syntax-error-after-peers", "a syntax error after a peers section", `http-request set-header x-a "unterminated`, true, ""},
	// Upstream d76fa37534b7: a reload failing on a bind error made the
	// master exit.
	{"unbindable-address", "a bind to an address the node does not have", "bind " + unbindable, false, unbindableHost},
}

// unbindable is in TEST-NET-1 (RFC 5737): no interface has it.
const unbindableHost, unbindable = "192.0.2.10", unbindableHost + ":8081"

func breakID(b Break) string { return b.ID }

// SelectBreaks are the breaks a BREAKS value names, in cycle order.
func SelectBreaks(v string) ([]Break, error) { return suite.Pick(v, Breaks, breakID, "break") }

// Config renders the config a break makes (Break{}: the good one): its
// line added to the frontend, after a peers section when it has one.
func Config(b Break) (string, error) {
	local := ""
	if b.Peers {
		local = "harp"
	}
	return config.RenderText("conf-failed-reload.cfg.tmpl", configTemplate, map[string]any{"Threads": 2, "LocalPeer": local, "Line": b.Line, "Peers": b.Peers})
}

// Evidence is what one cycle recorded.
type Evidence struct {
	Facts  judge.Facts       `json:"facts"`
	Status cliout.ProcStatus `json:"master_status_after_failure"`
	Reload node.Reload       `json:"recovery"`
	Broken string            `json:"broken_config"`
}

func run(ctx context.Context, env *suiteenv.Env) verdict.Outcome {
	good, err := Config(Break{})
	if err != nil {
		return verdict.Outcome{Err: err}
	}
	n, web, out := env.StartServing(ctx, node.Options{Config: good, Ports: []string{"8080/tcp"}}, 2, "8080/tcp")
	if n == nil {
		return out
	}
	return suiteenv.RunPicked(ctx, env, "BREAKS", SelectBreaks, func(ctx context.Context, t *verdict.Trial, b Break, round int) error {
		// The recovery is by SIGUSR2 in the first round of breaks, by the
		// master CLI in the second, and so on.
		how := []node.How{node.BySignal, node.ByMasterCLI}[round%2]
		c := &trial{n: n, web: web, t: t, b: b, how: how, good: good, key: fmt.Sprintf("keep-%d", t.N)}
		t.Evidence = &c.ev
		c.ev.Facts = judge.Facts{Break: b.Name, BreakID: b.ID, Recovery: string(how), Bound: env.Params.Duration("BOUND"), EntryWant: fmt.Sprint(t.N)}
		err := suiteenv.RunSteps(ctx, c.before, c.refused, c.fail, c.observe, c.recover)
		t.Checks, t.Violation, t.Unmet = judge.CycleChecks(c.ev.Facts)
		return suiteenv.StopIfGone(ctx, n, err)
	})
}

// trial is one cycle, its steps in order: before the break, the break
// refused, the reload it fails, what the master and the worker from
// before show after it, and the recovery.
type trial struct {
	n    *node.Node
	web  string // the worker's HTTP address
	t    *verdict.Trial
	b    Break
	how  node.How // how the recovery reload is asked for
	good string   // the config to go back to
	ev   Evidence // its facts hold the bound and the entry's gpc0
	old  int      // the worker from before the break
	key  string   // the entry it holds
}

// before: the worker answers HTTP and holds an entry.
func (c *trial) before(ctx context.Context) (bool, error) {
	f := &c.ev.Facts
	var err error
	if c.old, err = c.n.CurrentWorker(ctx); err != nil {
		f.Setup = "before the cycle: " + err.Error()
	} else if code, ok := load.Status(ctx, c.web, 5*time.Second).Get(); !ok || code != 200 {
		f.Setup = fmt.Sprintf("before the cycle the worker answered HTTP %s", text.HTTPCode(code))
	} else if err = c.n.SetEntry(ctx, c.old, "tbl", c.key, "data.gpc0 "+f.EntryWant); err != nil {
		f.Setup = "before the cycle: " + err.Error()
	}
	return f.Setup == "", nil // an unmet precondition ends the cycle
}

// refused: this build refuses the broken config (haproxy -c), so a new
// worker after it would be HAProxy's doing, not a break that does not
// break; an unbindable address is accepted by -c and fails when started.
func (c *trial) refused(ctx context.Context) (bool, error) {
	broken, err := Config(c.b)
	if err != nil {
		return false, err
	}
	c.ev.Broken = broken
	unmet, note, err := cannotLoad(ctx, c.n, "/etc/harp/broken.cfg", broken, "the config with "+c.b.Name, c.b.FailsOnBind, c.ev.Facts.Bound)
	if c.ev.Facts.Setup = unmet; note != "" {
		c.t.Note(note)
	}
	return unmet == "" && err == nil, err // an unmet precondition ends the cycle
}

// fail: the master's count of failed reloads read, the broken config in
// place, SIGUSR2, and show proc until it counts the failure or the count
// is final (observed, not waited out).
func (c *trial) fail(ctx context.Context) (bool, error) {
	f := &c.ev.Facts
	r, err := failReload(ctx, c.n, c.ev.Broken, c.old, f.Bound)
	if f.FailedBefore, f.Master = r.FailedBefore, r.Master; err != nil || obs.Gone(r.Master) {
		return false, err
	}
	f.OldPID, f.Procs, f.OldWorker = c.old, r.Procs, r.OldGone
	c.t.Note(r.Notes()...)
	return true, nil
}

// observe: after the failed reload the worker from before still serves
// HTTP and holds its entry, and the master takes signals. What it cannot
// read is unknown: the cycle goes on.
func (c *trial) observe(ctx context.Context) (bool, error) {
	f, n, old, t := &c.ev.Facts, c.n, c.old, c.t
	f.HTTP = n.HTTPStatus(ctx, old, c.web, 10*time.Second)
	f.Entry = n.EntryField(ctx, old, "tbl", c.key, "gpc0")
	st, err := n.MasterStatus(ctx)
	f.Signals = obs.Map(obs.From(st, err), cliout.ProcStatus.ReloadSignal)
	if err == nil {
		c.ev.Status = st
		t.Notef("master after the failed reload: %s", st.SignalText())
	}
	a, _ := f.Procs.Get()
	t.Notef("%s: show proc failed %d -> %s, worker %d listed: %v, new worker: %d, HTTP %s, %s gpc0=%s", c.b.Name, f.FailedBefore, obs.Text(f.Procs, func(a judge.ProcsAfter) string { return fmt.Sprint(a.Failed) }), old, a.OldListed, a.NewWorker,
		obs.Text(f.HTTP, text.HTTPCode), c.key, obs.Text(f.Entry, nil))
	n.ShowLogs(ctx, t, "master output after the failed reload (last lines)", 8)
	return true, nil
}

// recover: the good config back, then the next reload starts a worker
// that serves.
func (c *trial) recover(ctx context.Context) (bool, error) {
	f, n, how := &c.ev.Facts, c.n, c.how
	if err := n.WriteFile(ctx, node.ConfigPath, []byte(c.good)); err != nil {
		return false, err
	}
	r, err := n.ReloadBy(ctx, how, f.Bound)
	switch c.ev.Reload = r; {
	case err != nil && !node.IsReloadFailed(err):
		// Not HAProxy's answer: harp could not ask, or show proc kept
		// failing while it watched.
		f.HarnessErr = "the recovery reload could not be observed: " + err.Error()
	case err != nil:
		f.RecoveryErr = err.Error()
		if st, serr := n.MasterStatus(ctx); serr == nil {
			c.t.Notef("master after the recovery %s: %s", how, st.SignalText())
		}
	default:
		f.Recovered = true
		f.HTTPRecovered = obs.Opt(n.HTTPStatus(ctx, r.NewPID, c.web, 10*time.Second))
		c.t.Notef("recovery by %s: new worker %d listed %s after it, HTTP %s", how, r.NewPID, r.NewUp.Round(time.Millisecond), obs.Text(f.HTTPRecovered.Of, text.HTTPCode))
	}
	return true, nil
}

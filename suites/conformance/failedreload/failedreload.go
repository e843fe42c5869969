// Package failedreload: a reload with a config that cannot load changes
// nothing (the old worker keeps serving with its tables, the master says
// the reload failed and keeps taking signals), and the next reload with a
// good config works, by SIGUSR2 and by the master CLI.
package failedreload

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"time"

	"github.com/harp-project/harp/harness/cliout"
	"github.com/harp-project/harp/harness/config"
	"github.com/harp-project/harp/harness/load"
	"github.com/harp-project/harp/harness/node"
	"github.com/harp-project/harp/harness/obs"
	"github.com/harp-project/harp/harness/scenario"
	"github.com/harp-project/harp/harness/text"
	"github.com/harp-project/harp/harness/verdict"
	"github.com/harp-project/harp/suites/conformance/failedreload/judge"
)

var Suite = scenario.Register(&scenario.Scenario{
	ID:       judge.SuiteID,
	Upstream: "conformance: master-worker reloads that fail",
	Title:    "A reload with a config that cannot load changes nothing, and the next reload works",
	Summary:  "10 failure/recovery cycles on one node (a missing map file, a syntax error, an unknown keyword, a syntax error after a peers section, a bind to an address the node does not have; recovery by SIGUSR2 and by the master CLI): the old worker keeps serving with its table, show proc counts the failure, the master keeps taking signals, the next good reload starts a new worker",
	Labels:   []string{"area:conformance", "area:mworker"},
	Trials:   len(Breaks) * 2,
	Noun:     "cycles",
	Params: []scenario.Param{scenario.Duration("BOUND", 20*time.Second, "how long show proc may take to count a failed reload, and a good reload to start a new worker (observed: under 200 ms)"),
		scenario.Variants("BREAKS", "the breaks to cycle through (a bisect of one finding runs only its break)", Breaks, breakID, "break")},
	Steps: []string{
		"Setup: one node, nbthread 2; an HTTP frontend on 8080 answering 200 and tracking its x-key header in backend `tbl`'s stick table (type string len 32, expire 1h, store gpc0).",
		"Before each cycle: the current worker answers HTTP 200; `set table tbl key keep-N data.gpc0 N` on it; the master's `show proc` failed-reload counter is read.",
		"Trigger: the config is replaced by one that cannot load, each break once per round (a map file that does not exist; an unterminated quote; an unknown keyword; an unterminated quote after a peers section; a bind to 192.0.2.10, an address no node has), then SIGUSR2 to the master. Checked first: the build's `haproxy -c` must refuse it, except the bind, which `haproxy -c` must accept and which, started alone, must fail on that bind.",
		"Expectation, once `show proc` counts one more failed reload (within BOUND, 20 s): the same worker is still the current one and answers HTTP 200, its table still holds keep-N with gpc0 N, and the master does not block or leave pending SIGUSR2 (/proc/<master>/status SigBlk, SigPnd, ShdPnd, recorded).",
		"Recovery: the good config is written back and the node reloaded, by SIGUSR2 in the first round and by the master CLI `reload` in the second: a new worker must be listed within BOUND, and answer HTTP 200.",
	},
	Run: run,
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
	// Unbindable: the config parses (haproxy -c accepts it) and fails only
	// when started, on a bind no address of the node's can take.
	Unbindable bool
}

// Breaks in cycle order.
var Breaks = []Break{
	{"missing-map", "a missing map file", "http-request set-header x-m %[req.hdr(host),map(/etc/harp/absent.map)]", false, false},
	{"syntax-error", "a syntax error", `http-request set-header x-a "unterminated`, false, false},
	{"unknown-keyword", "an unknown keyword", "frobnicate yes", false, false},
	// Upstream 035058e8bfe4: the master crashed when a reload failed
	// after a peers section was parsed.
	{"syntax-error-after-peers", "a syntax error after a peers section", `http-request set-header x-a "unterminated`, true, false},
	// Upstream d76fa37534b7: a reload failing on a bind error made the
	// master exit.
	{"unbindable-address", "a bind to an address the node does not have", "bind " + unbindable, false, true},
}

// unbindable is in TEST-NET-1 (RFC 5737): no interface has it.
const unbindable = "192.0.2.10:8081"

func breakID(b Break) string { return b.ID }

// SelectBreaks are the breaks a BREAKS value names, in cycle order.
func SelectBreaks(v string) ([]Break, error) { return scenario.Pick(v, Breaks, breakID, "break") }

// Config renders the good config, or a broken one with line added to the
// frontend.
func Config(line string) (string, error) { return render(line, false) }

// BrokenConfig is the config a break makes.
func BrokenConfig(b Break) (string, error) { return render(b.Line, b.Peers) }

func render(line string, peers bool) (string, error) {
	local := ""
	if peers {
		local = "harp"
	}
	return config.RenderText("conf-failed-reload", `{{template "global" .}}
{{- if .Peers}}

peers harp
    peer harp 127.0.0.1:10000
    table tp type string len 32 size 1k expire 1h store gpc0
{{- end}}

frontend web
    mode http
    timeout client 10s
    bind 0.0.0.0:8080
    http-request track-sc0 req.hdr(x-key) table tbl
{{- with .Line}}
    {{.}}
{{- end}}
    http-request return status 200 content-type text/plain string ok

backend tbl
    stick-table type string len 32 size 1k expire 1h store gpc0
`, map[string]any{"Threads": 2, "LocalPeer": local, "Line": line, "Peers": peers})
}

// Evidence is what one cycle recorded.
type Evidence struct {
	Facts  judge.Facts       `json:"facts"`
	Status cliout.ProcStatus `json:"master_status_after_failure"`
	Reload node.Reload       `json:"recovery"`
	Broken string            `json:"broken_config"`
}

func run(ctx context.Context, env *scenario.Env) verdict.Outcome {
	good, err := Config("")
	if err != nil {
		return verdict.Outcome{Err: err}
	}
	breaks, err := SelectBreaks(env.Params.String("BREAKS"))
	if err != nil {
		return verdict.Outcome{Err: err}
	}
	n, web, out := env.StartServing(ctx, node.Options{Config: good, Ports: []string{"8080/tcp"}}, 2, "8080/tcp")
	if n == nil {
		return out
	}
	return env.RunTrials(ctx, func(ctx context.Context, t *verdict.Trial) error {
		b := breaks[(t.N-1)%len(breaks)]
		how := node.BySignal
		if (t.N-1)/len(breaks)%2 == 1 {
			how = node.ByMasterCLI
		}
		ev := &Evidence{}
		t.Evidence = ev
		ev.Facts = judge.Facts{Break: b.Name, BreakID: b.ID, Recovery: string(how)}
		err := trial(ctx, n, web, t, b, how, good, ev, env.Params.Duration("BOUND"))
		t.Checks, t.Violation, t.Unmet = judge.CycleChecks(ev.Facts)
		return scenario.StopIfGone(ctx, n, err)
	})
}

// cycle is one trial: a break, the reload it fails, what the master and
// the worker from before show after it, and the recovery.
type cycle struct {
	n        *node.Node
	web      string // the worker's HTTP address
	t        *verdict.Trial
	b        Break
	how      node.How // how the recovery reload is asked for
	good     string   // the config to go back to
	ev       *Evidence
	f        *judge.Facts
	bound    time.Duration
	old      int // the worker from before the break
	key, val string
}

func trial(ctx context.Context, n *node.Node, web string, t *verdict.Trial, b Break, how node.How, good string, ev *Evidence, bound time.Duration) error {
	c := &cycle{n: n, web: web, t: t, b: b, how: how, good: good, ev: ev, f: &ev.Facts, bound: bound,
		key: fmt.Sprintf("keep-%d", t.N), val: fmt.Sprint(t.N)}
	c.f.Bound = bound
	for _, step := range []func(context.Context) (bool, error){c.before, c.refused, c.fail} {
		if next, err := step(ctx); !next || err != nil {
			return err
		}
	}
	c.observe(ctx)
	return c.recover(ctx)
}

// before: the worker answers HTTP and holds an entry, and the master's
// count of failed reloads is read.
func (c *cycle) before(ctx context.Context) (bool, error) {
	f, n := c.f, c.n
	old, err := n.CurrentWorker(ctx)
	if err != nil {
		f.Setup = "before the cycle: " + err.Error()
		return false, nil
	}
	c.old = old
	if code, ok := load.Status(ctx, c.web, 5*time.Second).Get(); !ok || code != 200 {
		f.Setup = fmt.Sprintf("before the cycle the worker answered HTTP %s", judge.CodeText(code))
		return false, nil
	}
	if err := n.SetEntry(ctx, old, "tbl", c.key, "data.gpc0 "+c.val); err != nil {
		f.Setup = "before the cycle: " + err.Error()
		return false, nil
	}
	procs, err := n.Procs(ctx)
	if err != nil {
		return false, err
	}
	f.FailedBefore = procs.Master.Failed
	return true, nil
}

// refused: this build refuses the broken config (haproxy -c), so a new
// worker after it would be HAProxy's doing, not a break that does not
// break; an unbindable address is accepted by -c and fails when started.
func (c *cycle) refused(ctx context.Context) (bool, error) {
	f, n, b := c.f, c.n, c.b
	broken, err := BrokenConfig(b)
	if err != nil {
		return false, err
	}
	c.ev.Broken = broken
	const brokenPath = "/etc/harp/broken.cfg"
	if err := n.WriteFile(ctx, brokenPath, []byte(broken)); err != nil {
		return false, err
	}
	ok, out, err := n.CheckConfig(ctx, brokenPath)
	if err != nil {
		return false, err
	}
	switch {
	case b.Unbindable && !ok:
		f.Setup = fmt.Sprintf("haproxy -c refuses the config with %s on this build, which must fail only when started: %s", b.Name, firstLine(out))
		return false, nil
	case b.Unbindable:
		// Precondition: started alone, the config fails on that bind (a
		// node that could take the address would start a worker).
		rctx, cancel := context.WithTimeout(ctx, c.bound)
		code, out, err := n.RunBinary(rctx, "-db", "-f", brokenPath)
		cancel()
		if err != nil || code == 0 || !strings.Contains(out, strings.Split(unbindable, ":")[0]) {
			f.Setup = fmt.Sprintf("the config with %s, started alone, did not fail on that bind (exit %d, %v): %s", b.Name, code, err, firstLine(out))
			return false, nil
		}
		c.t.Notef("haproxy -c accepts the broken config, and started alone it fails on its bind: %s", firstLine(out))
	case ok:
		f.Setup = fmt.Sprintf("haproxy -c accepts the config with %s on this build: it is no break here", b.Name)
		return false, nil
	default:
		c.t.Notef("haproxy -c refuses the broken config: %s", firstLine(out))
	}
	return true, nil
}

// fail: the broken config in place, SIGUSR2, and show proc until it
// counts the failure (observed, not waited out).
func (c *cycle) fail(ctx context.Context) (bool, error) {
	f, n, old := c.f, c.n, c.old
	if err := n.WriteFile(ctx, node.ConfigPath, []byte(c.ev.Broken)); err != nil {
		return false, err
	}
	if err := n.Signal(ctx, syscall.SIGUSR2); err != nil {
		return false, fmt.Errorf("sending SIGUSR2: %w", err)
	}
	seen := n.ProcsUntil(ctx, c.bound, func(p cliout.Procs) bool { return p.Master.Failed > f.FailedBefore })
	if f.Master = n.MasterExit(ctx); exited(f.Master) {
		return false, nil
	}
	f.OldPID = old
	f.Procs = obs.Failure[judge.ProcsAfter]("%s", seen.Unknown())
	if p, ok := seen.Get(); ok {
		a := judge.ProcsAfter{Failed: p.Master.Failed, Counted: p.Master.Failed > f.FailedBefore}
		_, a.OldListed = p.Find(old)
		if cur, ok := p.Current(); ok && cur.PID != old {
			a.NewWorker = cur.PID
		}
		if _, current := p.Current(); !current && a.OldListed {
			c.t.Notef("show proc lists the worker that keeps serving, %d, among the old workers (as 3.1 and later do after a failed reload)", old)
		}
		f.Procs = obs.Value(a)
		if !a.OldListed {
			f.OldWorker = obs.Opt(obs.Value(obs.Exit{Process: fmt.Sprintf("old worker %d", old)}))
		}
	}
	return true, nil
}

// observe: after the failed reload the worker from before still serves
// HTTP and holds its entry, and the master takes signals.
func (c *cycle) observe(ctx context.Context) {
	f, n, old, t := c.f, c.n, c.old, c.t
	f.HTTP = httpAfter(ctx, n, old, c.web)
	e, ok, err := n.Entry(ctx, old, "tbl", c.key)
	if f.Entry = obs.From(e.Data["gpc0"], err); err == nil && !ok {
		f.Entry = obs.Value("absent")
	}
	f.EntryWant = c.val
	st := obs.From(n.MasterStatus(ctx))
	f.Signals = obs.Failure[judge.Signals]("the master's signal state: %s", st.Unknown())
	if st, ok := st.Get(); ok {
		c.ev.Status = st
		f.Signals = obs.Value(judge.Signals{Blocked: cliout.Has(st.SigBlk, syscall.SIGUSR2), Pending: cliout.Has(st.SigPnd|st.ShdPnd, syscall.SIGUSR2)})
		t.Notef("master after the failed reload: %s, blocked %s, pending %s", st.State, cliout.Signals(st.SigBlk), cliout.Signals(st.SigPnd|st.ShdPnd))
	}
	a, _ := f.Procs.Get()
	t.Notef("%s: show proc failed %d -> %s, worker %d listed: %v, new worker: %d, HTTP %s, %s gpc0=%s", c.b.Name, f.FailedBefore, obs.Text(f.Procs, func(a judge.ProcsAfter) string { return fmt.Sprint(a.Failed) }), old, a.OldListed, a.NewWorker,
		obs.Text(f.HTTP, judge.CodeText), c.key, obs.Text(f.Entry, nil))
	if logs, err := n.Logs(ctx); err == nil {
		t.Show("master output after the failed reload (last lines)", text.LastLines(logs, 8))
	}
}

// recover: the good config back, then the next reload starts a worker
// that serves.
func (c *cycle) recover(ctx context.Context) error {
	f, n, how, t := c.f, c.n, c.how, c.t
	if err := n.WriteFile(ctx, node.ConfigPath, []byte(c.good)); err != nil {
		return err
	}
	r, err := n.ReloadBy(ctx, how, c.bound)
	c.ev.Reload = r
	var failed *node.ReloadFailed
	if err != nil && !errors.As(err, &failed) {
		// Not HAProxy's answer: harp could not ask, or show proc kept
		// failing while it watched.
		f.HarnessErr = "the recovery reload could not be observed: " + err.Error()
		return nil
	}
	if err != nil {
		f.Recovery = string(how)
		f.RecoveryErr = err.Error()
		if st, serr := n.MasterStatus(ctx); serr == nil {
			t.Notef("master after the recovery %s: %s, blocked %s, pending %s", how, st.State, cliout.Signals(st.SigBlk), cliout.Signals(st.SigPnd|st.ShdPnd))
		}
		return nil
	}
	f.Recovered = true
	f.HTTPRecovered = obs.Opt(httpAfter(ctx, n, r.NewPID, c.web))
	t.Notef("recovery by %s: new worker %d listed %s after it, HTTP %s", how, r.NewPID, r.NewUp.Round(time.Millisecond), obs.Text(f.HTTPRecovered.Of, judge.CodeText))
	return nil
}

func exited(e obs.Of[obs.Exit]) bool {
	v, ok := e.Get()
	return ok && v.Process != ""
}

// httpAfter is the worker's HTTP answer. No answer within 10 s (several
// tries) is the worker's own only when its CLI answers through the same
// published ports in the same window (the control); otherwise harp could
// not reach it, and nothing is known.
func httpAfter(ctx context.Context, n *node.Node, pid int, web string) obs.Of[int] {
	code := load.Status(ctx, web, 10*time.Second)
	if code.Known() {
		return code
	}
	if _, err := n.Worker(ctx, pid, "show info"); err != nil {
		return obs.Failure[int]("%s, and worker %d's CLI did not answer either (%v)", code.Unknown(), pid, err)
	}
	return obs.Value(0)
}

// firstLine is the first line that says something (an [ALERT]).
func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, "ALERT") {
			return strings.TrimSpace(l)
		}
	}
	return strings.TrimSpace(strings.SplitN(s, "\n", 2)[0])
}

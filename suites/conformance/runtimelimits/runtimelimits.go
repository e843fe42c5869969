// Package runtimelimits: changing connection limits at runtime under load
// never hangs a worker (the rounds and what each expects are the suite's
// steps).
package runtimelimits

import (
	_ "embed"

	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/harp-project/harp/harness/core/cliout"
	"github.com/harp-project/harp/harness/core/config"
	"github.com/harp-project/harp/harness/core/obs"
	"github.com/harp-project/harp/harness/core/progress"
	"github.com/harp-project/harp/harness/core/suite"
	"github.com/harp-project/harp/harness/core/text"
	"github.com/harp-project/harp/harness/core/verdict"
	"github.com/harp-project/harp/harness/live/load"
	"github.com/harp-project/harp/harness/live/node"
	"github.com/harp-project/harp/harness/live/suiteenv"
	"github.com/harp-project/harp/suites/conformance/runtimelimits/judge"
)

// configTemplate is the suite's config, next to it (conf-runtime-limits.cfg.tmpl); the shared
// blocks (the global section) come from fixtures/templates.
//
//go:embed conf-runtime-limits.cfg.tmpl
var configTemplate string

var Suite = suite.Register(&suite.Suite{
	ID:       "conf-runtime-limits",
	Upstream: "conformance: runtime connection limits under load",
	Title:    "Changing maxconn and disabling a frontend at runtime under load never hangs the worker",
	Summary:  "vegeta load through a 2-thread frontend to a slow backend; frontend maxconn 0 and back, process maxconn 1 and back (0 means no limit), disable/enable frontend, 5 times each: CLI answers within CLI_BOUND, no watchdog warning, the worker stays, traffic resumes",
	Labels:   []string{"area:conformance", "area:listeners", "area:cli"},
	Trials:   len(Kinds),
	Noun:     "rounds",
	Params: []suite.Param{
		suite.Duration("CLI_BOUND", 3*time.Second, "how long one CLI command may take to answer"),
		suite.Int("CYCLES", 5, 1, 100, "limit down and up cycles per round"),
		// A bisect of one kind's bug needs that kind's rounds alone: another
		// kind's unmet precondition on an old build would leave the whole
		// run undecided.
		suite.Text("KINDS", "", "only these rounds (check ids, comma-separated: "+strings.Join(kindIDs(), ", ")+"; empty: every kind); the trials go round them", checkKinds),
	},
	StepsFor: func(p suite.Values) []string {
		return []string{
			"Setup: one node, nbthread 2, global maxconn 1000 (`set maxconn global 0` would mean no limit: the process round goes to 1); frontend `web` (maxconn 200) on 8080 whose backend is a slow server inside the same HAProxy (a TCP frontend on 127.0.0.1:8081 holds each connection for a 100 ms inspect-delay, then an HTTP frontend answers; server maxconn 20), so connections queue. Precondition: a single request takes at least 90 ms.",
			"Load: vegeta sends 100 requests/s to `web` for the whole round (timeout 10 s); a round starts only once it has had successes.",
			fmt.Sprintf("Rounds, one per kind (TRIALS=6 runs each twice): %s; each does %d cycles of: the limit down (or the frontend disabled), 500 ms held, the limit back up (or enabled), then a single request must be served within 5 s (one not served within 15 s counts as never only while the CLI answers and the frontend's hrsp_2xx stood still meanwhile: a frontend serving the load resumed, and harp's request waited in its queue).", suiteenv.List(Kinds, func(k Kind) string { return fmt.Sprintf("%s (`%s`, `%s`)", k.Name, k.Down, k.Up) }, "; "), p.Int("CYCLES")),
			fmt.Sprintf("Expectation: every CLI command answers within CLI_BOUND (%s) and is accepted, the worker's output shows no watchdog warning or panic, the same worker is current at the end, and every cycle's request after the limit was raised is served.", p.Duration("CLI_BOUND")),
		}
	},
	Run:       run,
	NoRegTest: "connection limits changed under vegeta load, judged on CLI answer times, watchdog warnings and traffic resuming: VTest has no load generator or timing",
})

// Kind is one way of pausing the listeners.
type Kind struct {
	Name     string
	Down, Up string
}

// Kinds in round order.
var Kinds = []Kind{
	{"frontend maxconn 0 and back", "set maxconn frontend web 0", "set maxconn frontend web 200"},
	// `set maxconn global 0` means "no limit" (the hard limit): 1 is the
	// least that pauses the listeners.
	{"process maxconn 1 and back", "set maxconn global 1", "set maxconn global 1000"},
	{"disable and enable the frontend", "disable frontend web", "enable frontend web"},
}

// kindIDs are the kinds' check ids.
func kindIDs() []string {
	var out []string
	for _, k := range Kinds {
		out = append(out, verdict.Slug(k.Name))
	}
	return out
}

func kindNames(ks []Kind) []string {
	var out []string
	for _, k := range ks {
		out = append(out, k.Name)
	}
	return out
}

// checkKinds refuses a KINDS value naming no kind.
func checkKinds(v string) error {
	for _, id := range strings.Split(v, ",") {
		if id = strings.TrimSpace(id); id != "" && !slices.Contains(kindIDs(), id) {
			return fmt.Errorf("no kind %q (want %s)", id, strings.Join(kindIDs(), ", "))
		}
	}
	return nil
}

// selected are the kinds a KINDS value names, in round order (every
// kind when it names none).
func selected(v string) []Kind {
	var out []Kind
	for _, k := range Kinds {
		for _, id := range strings.Split(v, ",") {
			if strings.TrimSpace(id) == verdict.Slug(k.Name) {
				out = append(out, k)
			}
		}
	}
	if len(out) == 0 {
		return Kinds
	}
	return out
}

// metLimitLatency: a request that took this long waited on a limit (the
// slow server alone holds it 100 ms).
const metLimitLatency = 300 * time.Millisecond

// Evidence is what one round recorded.
type Evidence struct {
	Facts judge.Facts `json:"facts"`
	Load  load.Result `json:"load"`
}

func run(ctx context.Context, env *suiteenv.Env) verdict.Outcome {
	cfg, err := config.RenderText("conf-runtime-limits.cfg.tmpl", configTemplate, nil)
	if err != nil {
		return verdict.Outcome{Err: err}
	}
	n, web, out := env.StartServing(ctx, node.Options{Config: cfg, Ports: []string{"8080/tcp"}}, 2, "8080/tcp")
	if n == nil {
		return out
	}
	bound, cycles := env.Params.Duration("CLI_BOUND"), env.Params.Int("CYCLES")
	kinds := selected(env.Params.String("KINDS"))
	if len(kinds) < len(Kinds) {
		progress.Printf("conf-runtime-limits: rounds of %s only (KINDS)", strings.Join(kindNames(kinds), ", "))
	}
	return env.RunTrials(ctx, func(ctx context.Context, t *verdict.Trial) error {
		k := kinds[(t.N-1)%len(kinds)]
		ev := &Evidence{Facts: judge.Facts{Kind: k.Name, Cycles: cycles, CLIBound: bound}}
		t.Evidence = ev
		r := &trial{n: n, web: web, t: t, k: k, bound: bound, ev: ev, f: &ev.Facts}
		r.run(ctx, cycles)
		t.Violation, t.Unmet = judge.Round(ev.Facts)
		t.Checks = verdict.KindCheck(k.Name, t.Violation, t.Unmet) // a bug may hang one kind alone (set maxconn frontend on a queued listener)
		return suiteenv.StopIfGone(ctx, n, nil)
	})
}

// trial is one round, and what its steps share.
type trial struct {
	n     *node.Node
	web   string // frontend web's address
	t     *verdict.Trial
	k     Kind
	bound time.Duration // CLI_BOUND
	ev    *Evidence
	f     *judge.Facts // &ev.Facts
}

// run is the round: under load, the limit set and lifted cycles times
// by the CLI, each command timed against the master's CLI as control,
// then what the worker's output and the master's log say of it.
func (r *trial) run(ctx context.Context, cycles int) {
	// Without the output before, earlier rounds' watchdog lines would
	// read as this one's.
	before, err := readBefore(ctx, r.n, "the round")
	if r.f.WorkerBefore = before.Worker; err != nil {
		r.f.Setup = err.Error()
		return
	}
	// The load runs for the whole round.
	stopLoad := load.Background(ctx, load.Options{URL: "http://" + r.web + "/", Rate: 100, Duration: 10 * time.Minute, Timeout: 10 * time.Second})
	defer func() { r.ev.Load = stopLoad() }()
	if r.f.Setup = r.slowServer(ctx); r.f.Setup != "" {
		return
	}
	stuck := false // a command not answered in time: what follows is the watchdog's
	for c := 1; c <= cycles && ctx.Err() == nil && !stuck; c++ {
		if stuck = r.limitCycle(ctx, c); !stuck {
			r.resumed(ctx, c)
		}
	}
	r.ev.Load = stopLoad()
	r.t.Notef("load during the round: %s", r.ev.Load)
	// Precondition: the traffic met the limit. A correct build holds or
	// refuses connections while it is down, so some request waited
	// through a hold or failed; a load that never did (harp's load
	// starved of CPU) tested nothing.
	r.f.MetLimit = r.ev.Load.Max >= metLimitLatency || r.ev.Load.Success < 1
	r.f.Requests = r.ev.Load.Requests
	r.afterRound(ctx, before, stuck)
	slow := judge.Slowest(r.f.CLI)
	r.t.Notef("%s: %d cycles, slowest CLI answer %s (%q), %d watchdog warnings, %d panics", r.k.Name, len(r.f.Resumed), slow.Took.Round(time.Millisecond), slow.Command, len(r.f.Stalls), len(r.f.Panics))
}

// slowServer is why the round cannot test the limit ("" when it can): the
// frontend serves, and the server really is slow, or nothing queues and
// the limit is never reached.
func (r *trial) slowServer(ctx context.Context) string {
	if !load.WaitServed(ctx, r.web, 10*time.Second) {
		return "the frontend never served a request before the round (10 s)"
	}
	probed, took := load.Probe(ctx, r.web, 3)
	if r.f.ProbeTook = took; !probed {
		return "a probe request was not served before the round (3 tries)"
	}
	if r.f.ProbeTook < 90*time.Millisecond {
		return fmt.Sprintf("the slow server answered a request in %s, not the 100 ms it must hold it: nothing would queue", r.f.ProbeTook.Round(time.Millisecond))
	}
	return ""
}

// limitCycle sets the limit and lifts it: each command waited for well
// past the bound (a slow machine answers late, a hung worker never, or
// its watchdog kills it), a late one checked against the master's CLI
// (askTimed). Stuck when one was not answered within the bound.
func (r *trial) limitCycle(ctx context.Context, c int) (stuck bool) {
	for _, cmd := range []string{r.k.Down, r.k.Up} {
		call := askTimed(ctx, r.n, node.StatsSocket, cmd, r.bound, judge.HangBound(r.bound))
		r.f.CLI = append(r.f.CLI, call)
		if call.NotSent() {
			return true
		}
		if call.Late(r.bound) {
			r.t.Notef("cycle %d: %q did not answer within %s: took %s %s", c, cmd, r.bound, call.Took.Round(time.Millisecond), call.Err)
			return true
		}
		if cmd == r.k.Down {
			if got, ok := r.applied(ctx); !ok && r.f.NotApplied == "" {
				r.f.NotApplied = fmt.Sprintf("after %q the admin socket shows %s", cmd, got)
			}
			node.Hold(ctx, 500*time.Millisecond) // connections queue meanwhile
		}
	}
	return false
}

// applied says whether the limit the round sets shows on the admin
// socket (read again for up to a second), and what it shows.
func (r *trial) applied(ctx context.Context) (string, bool) {
	if strings.Contains(r.k.Down, "global") {
		i, ok := node.Until(ctx, time.Second, 50*time.Millisecond, func() (map[string]string, error) { return r.n.Info(ctx, node.StatsSocket) },
			func(i map[string]string) bool { return i["Maxconn"] == "1" })
		return "Maxconn=" + i["Maxconn"], ok
	}
	fe, ok := waitStatRow(ctx, r.n, node.StatsSocket, "web", "FRONTEND", time.Second, 50*time.Millisecond, func(fe cliout.StatRow) bool {
		if strings.HasPrefix(r.k.Down, "disable") { // STOP or PAUSED, by version
			return fe.Fields["status"] != "" && fe.Fields["status"] != "OPEN"
		}
		return fe.Fields["slim"] == "0"
	})
	return fe.Columns("slim", "status"), ok
}

// resumed records how long the first request served after the limit was
// raised took to come, waited for up to judge.HangBound; judge.Unserved
// says what a request never served means, from frontend web's count of
// 2xx responses (read within bound) at the raise and after the wait.
func (r *trial) resumed(ctx context.Context, c int) {
	hang := judge.HangBound(r.bound)
	w := load.WaitResumed(ctx, r.web, hang, func() obs.Of[int64] {
		return obs.From(statInt(ctx, r.n, node.StatsSocket, "web", "FRONTEND", "hrsp_2xx", r.bound))
	})
	res := obs.Value(w.Took)
	if !w.Served {
		res = judge.Unserved(hang, w.Before, w.After)
	}
	r.f.Resumed = append(r.f.Resumed, res)
	if v, ok := res.Get(); !ok || v > judge.ResumeBound {
		r.t.Notef("cycle %d: no request served within %s of `%s` (%s)", c, judge.ResumeBound, r.k.Up, obs.Text(res, resumedText))
	}
}

func resumedText(v time.Duration) string {
	if v == judge.Never {
		return "never, while the CLI answered"
	}
	return "after " + v.Round(time.Millisecond).String()
}

// afterRound reads what the round left (aftermath): the watchdog's
// lines in the worker's output since before, the master's log of worker
// exits, the current worker, and whether the master exited; after a stuck
// CLI, the watchdog's panic is waited for.
func (r *trial) afterRound(ctx context.Context, before roundStart, stuck bool) {
	r.f.Aftermath = aftermath(ctx, r.n, before, "the round", stuck)
	if len(r.f.Stalls) > 0 || len(r.f.Panics) > 0 {
		r.t.Show("worker output with the watchdog's lines", text.LastLines(r.f.Fresh, 60))
	}
}

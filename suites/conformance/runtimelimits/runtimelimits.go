// Package runtimelimits: changing connection limits at runtime under load
// never hangs a worker. With traffic queueing in front of a slow backend
// and two threads sharing the listener and proxy locks, the frontend's
// and the process's maxconn go to 0 and back, and the frontend is
// disabled and enabled, repeatedly: every CLI command answers within a
// bound, no watchdog warning or panic appears, the worker stays, and
// connections are served again once the limit is raised.
package runtimelimits

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/harp-project/harp/harness/cliout"
	"github.com/harp-project/harp/harness/config"
	"github.com/harp-project/harp/harness/load"
	"github.com/harp-project/harp/harness/node"
	"github.com/harp-project/harp/harness/obs"
	"github.com/harp-project/harp/harness/scenario"
	"github.com/harp-project/harp/harness/text"
	"github.com/harp-project/harp/harness/verdict"
	"github.com/harp-project/harp/suites/conformance/runtimelimits/judge"
)

var Suite = scenario.Register(&scenario.Scenario{
	ID:       "conf-runtime-limits",
	Upstream: "conformance: runtime connection limits under load",
	Title:    "Changing maxconn and disabling a frontend at runtime under load never hangs the worker",
	Summary:  "vegeta load through a 2-thread frontend to a slow backend; frontend maxconn 0 and back, process maxconn 1 and back (0 means no limit), disable/enable frontend, 5 times each: CLI answers within CLI_BOUND, no watchdog warning, the worker stays, traffic resumes",
	Labels:   []string{"area:conformance", "area:listeners", "area:cli"},
	Trials:   len(Kinds),
	Noun:     "rounds",
	Params: []scenario.Param{
		scenario.Duration("CLI_BOUND", 3*time.Second, "how long one CLI command may take to answer"),
		scenario.Int("CYCLES", 5, 1, 100, "limit down and up cycles per round"),
	},
	StepsFor: func(p scenario.Values) []string {
		return []string{
			"Setup: one node, nbthread 2, global maxconn 1000 (`set maxconn global 0` would mean no limit: the process round goes to 1); frontend `web` (maxconn 200) on 8080 whose backend is a slow server inside the same HAProxy (a TCP frontend on 127.0.0.1:8081 holds each connection for a 100 ms inspect-delay, then an HTTP frontend answers; server maxconn 20), so connections queue. Precondition: a single request takes at least 90 ms.",
			"Load: vegeta sends 100 requests/s to `web` for the whole round (timeout 10 s); a round starts only once it has had successes.",
			fmt.Sprintf("Rounds, one per kind (TRIALS=6 runs each twice): %s; each does %d cycles of: the limit down (or the frontend disabled), 500 ms held, the limit back up (or enabled), then a single request must be served within 5 s (one not served within 15 s counts as never only while the CLI answers and the frontend's hrsp_2xx stood still meanwhile: a frontend serving the load resumed, and harp's request waited in its queue).", scenario.List(Kinds, func(k Kind) string { return fmt.Sprintf("%s (`%s`, `%s`)", k.Name, k.Down, k.Up) }, "; "), p.Int("CYCLES")),
			fmt.Sprintf("Expectation: every CLI command answers within CLI_BOUND (%s) and is accepted, the worker's output shows no watchdog warning or panic, the same worker is current at the end, and every cycle's request after the limit was raised is served.", p.Duration("CLI_BOUND")),
		}
	},
	Run: run,
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

// metLimitLatency: a request that took this long waited on a limit (the
// slow server alone holds it 100 ms).
const metLimitLatency = 300 * time.Millisecond

// Evidence is what one round recorded.
type Evidence struct {
	Facts judge.Facts `json:"facts"`
	Load  load.Result `json:"load"`
}

func run(ctx context.Context, env *scenario.Env) verdict.Outcome {
	cfg, err := config.Render("conf-runtime-limits.cfg.tmpl", nil)
	if err != nil {
		return verdict.Outcome{Err: err}
	}
	n, web, out := env.StartServing(ctx, node.Options{Config: cfg, Ports: []string{"8080/tcp"}}, 2, "8080/tcp")
	if n == nil {
		return out
	}
	bound, cycles := env.Params.Duration("CLI_BOUND"), env.Params.Int("CYCLES")
	return env.RunTrials(ctx, func(ctx context.Context, t *verdict.Trial) error {
		k := Kinds[(t.N-1)%len(Kinds)]
		ev := &Evidence{Facts: judge.Facts{Kind: k.Name, Cycles: cycles, CLIBound: bound}}
		t.Evidence = ev
		err := trial(ctx, n, web, t, k, bound, cycles, ev)
		t.Violation, t.Unmet = judge.Round(ev.Facts)
		return scenario.StopIfGone(ctx, n, err)
	})
}

// trial is one round: under load, the limit set and lifted cycles times
// by the CLI, each command timed against the master's CLI as control,
// then what the worker's output and the master's log say of it.
func trial(ctx context.Context, n *node.Node, web string, t *verdict.Trial, k Kind, bound time.Duration, cycles int, ev *Evidence) error {
	f := &ev.Facts
	before, err := n.CurrentWorker(ctx)
	if err != nil {
		f.Setup = "before the round: " + err.Error()
		return nil
	}
	f.WorkerBefore = before
	logsBefore, err := n.Logs(ctx)
	if err != nil {
		// Without it, earlier rounds' watchdog lines would read as this one's.
		f.Setup = "the worker's output before the round could not be read: " + err.Error()
		return nil
	}
	// The load runs for the whole round.
	stopLoad := load.Background(ctx, load.Options{URL: "http://" + web + "/", Rate: 100, Duration: 10 * time.Minute, Timeout: 10 * time.Second})
	defer func() { ev.Load = stopLoad() }()
	if f.Setup = slowServer(ctx, web, f); f.Setup != "" {
		return nil
	}
	for c := 1; c <= cycles && ctx.Err() == nil; c++ {
		limitCycle(ctx, n, t, k, bound, c, f)
		if f.Stuck() != "" {
			break
		}
		f.Resumed = append(f.Resumed, resumed(ctx, n, web, bound))
		if r := f.Resumed[len(f.Resumed)-1]; r.State != obs.Seen || r.Value > judge.ResumeBound {
			t.Notef("cycle %d: no request served within %s of `%s` (%s)", c, judge.ResumeBound, k.Up, resumedText(r))
		}
	}
	ev.Load = stopLoad()
	t.Notef("load during the round: %s", ev.Load)
	// Precondition: the traffic met the limit. A correct build holds or
	// refuses connections while it is down, so some request waited
	// through a hold or failed; a load that never did (harp's load
	// starved of CPU) tested nothing.
	f.MetLimit = ev.Load.Max >= metLimitLatency || ev.Load.Success < 1
	f.Requests = ev.Load.Requests
	afterRound(ctx, n, t, before, logsBefore, f)
	slow := f.Slowest()
	t.Notef("%s: %d cycles, slowest CLI answer %s (%q), %d watchdog warnings, %d panics", k.Name, len(f.Resumed), slow.Took.Round(time.Millisecond), slow.Command, len(f.Stalls), len(f.Panics))
	return nil
}

// slowServer is why the round cannot test the limit ("" when it can): the
// frontend serves, and the server really is slow, or nothing queues and
// the limit is never reached.
func slowServer(ctx context.Context, web string, f *judge.Facts) string {
	if !load.WaitServed(ctx, web, 10*time.Second) {
		return "the frontend never served a request before the round (10 s)"
	}
	probed, took := load.Probe(ctx, web, 3)
	if f.ProbeTook = took; !probed {
		return "a probe request was not served before the round (3 tries)"
	}
	if f.ProbeTook < 90*time.Millisecond {
		return fmt.Sprintf("the slow server answered a request in %s, not the 100 ms it must hold it: nothing would queue", f.ProbeTook.Round(time.Millisecond))
	}
	return ""
}

// limitCycle sets the limit and lifts it: each command waited for well
// past the bound (a slow machine answers late, a hung worker never, or
// its watchdog kills it), a late one checked against the master's CLI.
func limitCycle(ctx context.Context, n *node.Node, t *verdict.Trial, k Kind, bound time.Duration, c int, f *judge.Facts) {
	for _, cmd := range []string{k.Down, k.Up} {
		call := ask(ctx, n, cmd, judge.HangBound(bound))
		if strings.HasPrefix(call.Err, judge.NotSent) {
			call.Control = obs.Opt(obs.Failure[bool]("%q %s", cmd, call.Err))
			f.CLI = append(f.CLI, call)
			return
		}
		late := call.Err != "" || call.Took > bound
		if late {
			t.Notef("cycle %d: %q did not answer within %s: took %s %s", c, cmd, bound, call.Took.Round(time.Millisecond), call.Err)
			// The control: the master's CLI, another process on the
			// same node and path, answers while the worker does not.
			merr := n.MasterAnswers(ctx, bound)
			call.Control = obs.Opt(obs.Value(merr == nil))
			if merr != nil && call.Err != "" {
				call.Control = obs.Opt(obs.Failure[bool]("the master's CLI did not answer either (%s): the node, not the worker, is out of reach", merr))
			}
		}
		f.CLI = append(f.CLI, call)
		if late {
			return
		}
		if cmd == k.Down {
			if got, ok := applied(ctx, n, k); !ok && f.NotApplied == "" {
				f.NotApplied = fmt.Sprintf("after %q the admin socket shows %s", cmd, got)
			}
			node.Hold(ctx, 500*time.Millisecond) // connections queue meanwhile
		}
	}
}

// ask runs one command on the stats socket within bound, as the judge
// reads it (a stuck CLI is evidence, not a harness error).
func ask(ctx context.Context, n *node.Node, cmd string, bound time.Duration) judge.CLICall {
	a := n.AskWithin(ctx, node.StatsSocket, cmd, bound)
	call := judge.CLICall{Command: cmd, Took: a.Took, Answer: a.Answer}
	switch {
	case a.Ended:
		call.Answer, call.Err = "", "the run ended"
	case a.NotSent():
		call.Err = judge.NotSent + a.Err.Error()
	case a.Err != nil:
		call.Err = a.Err.Error()
	}
	return call
}

// afterRound reads what the round left: the watchdog's lines in the
// worker's output since logsBefore, the master's log of worker exits,
// the current worker, and whether the master exited.
func afterRound(ctx context.Context, n *node.Node, t *verdict.Trial, before int, logsBefore string, f *judge.Facts) {
	if f.Stuck() != "" {
		// A stuck CLI is evidence already; HAProxy's watchdog says more
		// within seconds (a warning, then a panic and the worker's exit).
		n.WaitLogsAfter(ctx, logsBefore, 10*time.Second, 200*time.Millisecond, func(fresh string) bool {
			return len(cliout.ParsePanics(fresh)) > 0
		})
	}
	if fresh, err := n.LogsAfter(ctx, logsBefore); err != nil {
		f.MarkUnread("the worker's output after the round: %v", err)
	} else {
		f.Stalls, f.Panics = cliout.ParseStalls(fresh), cliout.ParsePanics(fresh)
		if len(f.Stalls) > 0 || len(f.Panics) > 0 {
			t.Show("worker output with the watchdog's lines", text.LastLines(fresh, 60))
		}
	}
	if exits, err := n.Exits(ctx); err != nil {
		f.MarkUnread("the master's log of worker exits: %v", err)
	} else if e, ok := cliout.ExitOf(exits, before); ok {
		f.Died = fmt.Sprintf("worker %d %s", e.PID, e.Ended())
	}
	if cur, err := n.CurrentWorker(ctx); err != nil {
		f.MarkUnread("the current worker after the round: %v", err) // explained if the master is gone
	} else {
		f.WorkerAfter = cur
	}
	// A master that exited (2.6 leaves with its worker when the watchdog
	// kills it) is HAProxy's answer, and explains every read that failed
	// after it, the master-CLI control included.
	f.Master = obs.Opt(n.MasterExit(ctx))
}

// applied says whether the limit a round sets shows on the admin socket.
func applied(ctx context.Context, n *node.Node, k Kind) (string, bool) {
	var got string
	ok := node.Poll(ctx, time.Second, 50*time.Millisecond, func() (bool, error) {
		if strings.Contains(k.Down, "global") {
			i, err := n.Info(ctx, node.StatsSocket)
			if err != nil {
				return false, nil
			}
			got = "Maxconn=" + i["Maxconn"]
			return i["Maxconn"] == "1", nil
		}
		rows, err := n.Stat(ctx, node.StatsSocket)
		if err != nil {
			return false, nil
		}
		r, _ := cliout.FindStat(rows, "web", "FRONTEND")
		got = r.Columns("slim", "status")
		if strings.HasPrefix(k.Down, "disable") { // STOP or PAUSED, by version
			return r.Fields["status"] != "" && r.Fields["status"] != "OPEN", nil
		}
		return r.Fields["slim"] == "0", nil
	}) == nil
	return got, ok
}

// resumed is how long the first request served after the limit was raised
// took to come, waited for up to judge.HangBound; judge.Unserved says what
// a request never served means, from frontend web's count of 2xx
// responses (read within bound) at the raise and after the wait.
func resumed(ctx context.Context, n *node.Node, web string, bound time.Duration) obs.Of[time.Duration] {
	served := func() obs.Of[int64] {
		return obs.From(n.StatInt(ctx, node.StatsSocket, "web", "FRONTEND", "hrsp_2xx", bound))
	}
	t0 := time.Now()
	before := served()
	if load.WaitServed(ctx, web, judge.HangBound(bound)) {
		return obs.Value(time.Since(t0))
	}
	return judge.Unserved(judge.HangBound(bound), before, served())
}

func resumedText(r obs.Of[time.Duration]) string {
	switch v, ok := r.Get(); {
	case !ok:
		return "unknown: " + r.Unknown()
	case v == judge.Never:
		return "never, while the CLI answered"
	default:
		return "after " + v.Round(time.Millisecond).String()
	}
}

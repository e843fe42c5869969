// Package upstreamfixes: upstream's own fixed bugs, one case each, one
// file each (fixtures/upstream-fixes/<case>.case). Every case is a runtime
// command, a config checked with `haproxy -c`, or a connection, written
// from the fix's commit message, and expects what the fix made HAProxy do; a case that kills the worker fails whatever it
// expected. Each case is a named check (upstream-fixes/<case>), so
// docs/upstream-bugs.md reads every fix's verdict on its last bad and
// first fixed release from the same run.
package upstreamfixes

import (
	"context"
	"fmt"
	"time"

	"github.com/harp-project/harp/harness/cliout"
	"github.com/harp-project/harp/harness/config"
	"github.com/harp-project/harp/harness/node"
	"github.com/harp-project/harp/harness/scenario"
	"github.com/harp-project/harp/harness/verdict"
	"github.com/harp-project/harp/suites/regressions/upstreamfixes/judge"
)

var Suite = scenario.Register(&scenario.Scenario{
	ID:       "upstream-fixes",
	Upstream: "regressions: upstream's fixed CLI, config and stick-table bugs",
	Title:    "Runtime commands, configs and connections from upstream's fixed bugs behave as their fixes made them, and none kills the worker",
	Summary:  "one node; each case (a stats or master CLI command, a config checked with haproxy -c, a connection) expects what its upstream fix made HAProxy do; cases a build is too old for are not applicable",
	Labels:   []string{"area:regressions", "area:cli"},
	Trials:   len(Cases),
	Noun:     "cases",
	StepsFor: func(scenario.Values) []string {
		var s []string
		s = append(s, "Setup: one node (nbthread 1) with an admin and a level user stats socket, a peers section `p` holding only the local peer `harp` (port 10000) and one `p2` with `harp` (port 10001) and a remote peer `remote` on a port where nothing listens, for harp's peers sessions, map "+mapFile+" (k0 v0), an ip table `tip` (gpc0), a string table `texp` whose entries expire after 1s, an ip table `tgpc` (gpc(1)), a TCP frontend on 8081 whose `tcp-request connection accept if { src_inc_gpc(0,tgpc) -m bool }` tracks nothing, an HTTP frontend on 8082 tracking int(97) in integer table `tint` and answering `sc0_get_gpc0(tstr)` in header x-g, an ip table `tpipe`, a string table `tpurge` (20k entries, expire 8s), an HTTP frontend on 8083 tracking `url_param(q),url_dec` in string table `tnul`, and an HTTP frontend on 8084 with `maxconn 1` and `rate-limit sessions 1`. A case on \"a node of its own\" starts one for itself (its config is in the run's report) and leaves the shared node alone.")
		for _, c := range Cases {
			line := fmt.Sprintf("Case `%s` (upstream %s", c.ID, c.Fix)
			if c.Since != "" {
				line += ", from HAProxy " + c.Since
			}
			if c.Until != "" {
				line += ", before HAProxy " + c.Until
			}
			s = append(s, line+"): "+c.Does+"; expected: "+c.Expects+".")
		}
		return append(s, "After each case the worker must still answer `show info` within 10s. One that does not fails the case when the master logged its death (the node is then started again for the next case); without that log line the case is INCONCLUSIVE.")
	},
	Run: run,
})

const mapFile = "/etc/harp/m.map"

// Cases in the order they run, each from its file under
// fixtures/upstream-fixes: what it is, how it reaches HAProxy and what its
// answer must be.
var Cases = judge.Cases

type Case = judge.Case

func run(ctx context.Context, env *scenario.Env) verdict.Outcome {
	cfg, err := config.Render("upstream-fixes.cfg.tmpl", nil)
	if err != nil {
		return verdict.Outcome{Err: err}
	}
	n, unmet, err := env.StartNode(ctx, node.Options{Config: cfg, Ports: []string{"8080/tcp", "8081/tcp", "8082/tcp", "8083/tcp", "8084/tcp", "10000/tcp", sessionPort, userPort}, Files: map[string]string{mapFile: "k0 v0\n"}}, 1)
	if n == nil {
		return verdict.Outcome{Unmet: unmet, Err: err}
	}
	return env.RunTrials(ctx, func(ctx context.Context, t *verdict.Trial) error {
		return trial(ctx, env, n, t, Cases[(t.N-1)%len(Cases)])
	})
}

// trial runs one case: not applicable to a build too old or too new for
// it; else its answer, then whether the worker still answers, and a death
// only when the master logged it (the node is then started again).
func trial(ctx context.Context, env *scenario.Env, n *node.Node, t *verdict.Trial, c Case) error {
	f := &judge.Facts{Case: c.ID, Fix: c.Fix}
	t.Evidence = f
	defer func() {
		t.Checks, t.Violation, t.Unmet = judge.Check(*f)
		if f.Skip != "" {
			t.Remark = "not applicable: " + f.Skip
		}
	}()
	if cliout.Older(env.Image.Version, c.Since) {
		f.Skip = fmt.Sprintf("%s needs HAProxy %s", c.ID, c.Since)
		return nil
	}
	if c.Until != "" && !cliout.Older(env.Image.Version, c.Until) {
		f.Skip = fmt.Sprintf("%s uses what HAProxy %s removed", c.ID, c.Until)
		return nil
	}
	if c.Node != "" {
		own, err := ownNode(ctx, env, c)
		if err != nil {
			f.HarpErr = err.Error()
			return nil
		}
		defer env.StopNode(ctx, own) // its crashes kept first
		n = own
	}
	before, err := n.Exits(ctx)
	if err != nil {
		f.HarpErr = "reading the master's log before the case: " + err.Error()
		return nil
	}
	exits := len(before)
	f.Answer, f.HarpErr = do(ctx, n, c)
	t.Notef("%s: %s", c.ID, judge.OneLine(f.Answer))
	if n.Alive(ctx, 10*time.Second) {
		return nil
	}
	// No answer is not a death: the master's log must say a worker
	// exited since the case began. A death is the case's finding even
	// where harp could not finish reading the case (it died under it).
	if f.Died = n.DiedSince(ctx, exits, 10*time.Second); f.Died {
		f.HarpErr = ""
	} else if f.HarpErr == "" {
		f.HarpErr = "the worker answered no show info within 10s after the case, and no worker exit was logged"
	}
	if c.Node != "" {
		t.Notef("%s: the worker of the case's own node no longer answers (died: %v)", c.ID, f.Died)
		return nil
	}
	t.Notef("%s: the worker no longer answers (died: %v); starting the node again", c.ID, f.Died)
	if err := n.Restart(ctx, 30*time.Second); err != nil {
		return fmt.Errorf("restarting the node after %s: %w", c.ID, err)
	}
	return nil
}

// ownNode starts the case's own node. A config this build refuses is
// harp's error, never HAProxy's answer: the case's Since names what the
// config needs.
func ownNode(ctx context.Context, env *scenario.Env, c Case) (*node.Node, error) {
	cfg, err := config.RenderText("upstream-fixes-"+c.ID, c.Node, nil)
	if err != nil {
		return nil, err
	}
	own, unmet, err := env.StartNode(ctx, node.Options{Name: "node-upstream-fixes-" + c.ID, Config: cfg, Ports: c.NodePorts}, 0)
	switch {
	case err != nil:
		return nil, fmt.Errorf("starting the case's own node: %w", err)
	case own == nil:
		return nil, fmt.Errorf("starting the case's own node: %s", unmet)
	}
	return own, nil
}

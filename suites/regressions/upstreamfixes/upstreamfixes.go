// Package upstreamfixes: upstream's own fixed bugs, one case each. Every
// case is a runtime command, a config checked with `haproxy -c`, or a
// connection, written from the fix's commit message, and expects what the
// fix made HAProxy do; a case that kills the worker fails whatever it
// expected. Each case is a named check (upstream-fixes/<case>), so
// docs/upstream-bugs.md reads every fix's verdict on its last bad and
// first fixed release from the same run.
package upstreamfixes

import (
	"context"
	"fmt"
	"time"

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

// Kind is how a case reaches HAProxy.
type Kind string

const (
	Stats   Kind = "stats"   // bytes on the admin stats socket, read until it closes
	Master  Kind = "master"  // bytes on the master CLI
	Check   Kind = "check"   // a config checked with haproxy -c
	Connect Kind = "connect" // a TCP connection to the frontend on 8081
	HTTP    Kind = "http"    // Send on the stats socket, then a request to the frontend on 8082: its x-g header
	Peer    Kind = "peer"    // a connection to the peers bind (10000) that sends nothing and half-closes
	Exec    Kind = "exec"    // the build's haproxy run beside the node with Args ({cfg}: Config written to a file)
	// PeerSession: harp's peers client completes a handshake as `remote`
	// (no heartbeats, no answers of its own) and runs the case's Session.
	PeerSession Kind = "peer-session"
	// Steps: the case's Drive runs several exchanges and composes the
	// answer (counts before and after, a connection's fate over time).
	Steps Kind = "steps"
)

// Case is one upstream fix as a black-box check: what it is and what its
// answer must be (judge.Case), and how it reaches HAProxy.
type Case struct {
	judge.Case
	Reach
}

// Reach is how a case reaches HAProxy.
type Reach struct {
	Kind   Kind
	Send   string // the bytes sent (Stats, Master), or a Check's frontend lines
	Global string // a Check's global lines
	Extra  string // a Check's further sections
	// Silent: no byte within answerWait is an answer, the empty one (the
	// bug's own when it drops the command without a word, the fix's when
	// it closes nothing and says nothing); it is judged only because the
	// worker answers show info right after, which a slow machine would
	// delay too.
	Silent bool
	// KeepOpen: the client never ends its side (a command answered
	// before the client's end).
	KeepOpen bool
	// Times: that many connections, one after another (0: one); an empty
	// Send is a connection closed at once.
	Times int
	// Abort: the client closes right after sending, reading nothing.
	Abort bool
	// Direct: a Stats case's client connects to the node's own address,
	// not through Docker's port proxy, which turns an abort into an
	// orderly close after what HAProxy has read.
	Direct bool
	Then   string // a stats command whose answer is appended (the state after)
	// Port: the stats socket a Stats case writes to (userPort: the one at
	// level user; "": the admin one); Then always reads the admin one.
	Port string
	// Session drives a PeerSession case and gives its answer.
	Session func(ctx context.Context, p PeerRun) (string, error)
	// Drive runs a Steps case; an error is harp's failure to observe.
	Drive func(ctx context.Context, n *node.Node) (string, error)
	// Node: a whole config for a node of the case's own, where the case
	// needs global settings (threads, tune.*) or a state the shared node
	// must not carry into other cases; NodePorts are its ports besides
	// the stats and master sockets.
	Node      string
	NodePorts []string
	// Args of an Exec case; {cfg} is the path Config is written to.
	Args   []string
	Config string
}

// nodeConfig is the one node's config: every case's sockets, tables,
// frontends and peers section.
const nodeConfig = `global
    nbthread 1
    localpeer harp
    stats socket ipv4@0.0.0.0:9998 level admin
    stats socket ipv4@0.0.0.0:9997 level user
    stats timeout 1m

defaults
    timeout connect 2s
    timeout client 1m
    timeout server 1m

frontend web
    mode http
    bind 0.0.0.0:8080
    http-request set-var(txn.m) req.hdr(host),map(` + mapFile + `)
    http-request return status 200

frontend untracked
    mode tcp
    bind 0.0.0.0:8081
    tcp-request connection accept if { src_inc_gpc(0,tgpc) -m bool }
    default_backend nowhere

backend nowhere
    mode tcp

frontend mixed
    mode http
    bind 0.0.0.0:8082
    http-request track-sc0 int(97) table tint
    http-request return status 200 hdr x-g "%[sc0_get_gpc0(tstr)]"

backend tint
    stick-table type integer size 1k expire 1h store gpc0

backend tstr
    stick-table type string len 32 size 1k expire 1h store gpc0

peers p
    bind 0.0.0.0:10000
    server harp
    table tp type ip size 1k expire 1h store gpc0

peers p2
    bind 0.0.0.0:10001
    server harp
    server remote 127.0.0.1:10999
    table tp2 type ip size 1k expire 1h store gpc0

backend tip
    stick-table type ip size 1k expire 1h store gpc0

backend texp
    stick-table type string len 32 size 1k expire 1s store gpc0

backend tgpc
    stick-table type ip size 1k expire 1h store gpc(1)

backend tpipe
    stick-table type ip size 1k expire 1h store gpc0

backend tpurge
    stick-table type string len 32 size 20k expire 8s store gpc0

frontend nul
    mode http
    bind 0.0.0.0:8083
    http-request track-sc0 url_param(q),url_dec table tnul
    http-request return status 200

backend tnul
    stick-table type string len 32 size 1k expire 1h store http_req_cnt

frontend limited
    mode http
    bind 0.0.0.0:8084
    maxconn 1
    rate-limit sessions 1
    http-request return status 200
`

func run(ctx context.Context, env *scenario.Env) verdict.Outcome {
	cfg, err := config.RenderText("upstream-fixes", nodeConfig, nil)
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
	if judge.Older(env.Image.Version, c.Since) {
		f.Skip = fmt.Sprintf("%s needs HAProxy %s", c.ID, c.Since)
		return nil
	}
	if c.Until != "" && !judge.Older(env.Image.Version, c.Until) {
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

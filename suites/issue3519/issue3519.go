// Package issue3519 encodes haproxy/haproxy#3519: "Peers: releasing a
// superseded connection clears the replacement alive flag".
package issue3519

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/harp-project/harp/harness/core/cliout"
	"github.com/harp-project/harp/harness/core/config"
	"github.com/harp-project/harp/harness/core/obs"
	"github.com/harp-project/harp/harness/core/suite"
	"github.com/harp-project/harp/harness/core/verdict"
	"github.com/harp-project/harp/harness/live/node"
	"github.com/harp-project/harp/harness/live/peers"
	"github.com/harp-project/harp/harness/live/remotepeer"
	"github.com/harp-project/harp/harness/live/suiteenv"
	"github.com/harp-project/harp/suites/issue3519/judge"
)

// When a peer connects again while its previous
// session is up (a collision), HAProxy keeps the new session and kills the
// old one; releasing the old applet clears the peer's alive flag although
// the peer now belongs to the new session, so at the next reconnect check
// (50 to 2049 ms later, the collision backoff) the sync task takes the
// replacement for dead and kills it.
var Suite = suite.Register(&suite.Suite{
	ID:       "3519",
	Upstream: "haproxy/haproxy#3519",
	Title:    "Peers: releasing a superseded connection clears the replacement alive flag",
	Summary:  "harp's peers client connects as `remote` twice (a collision); the replacement must survive HAProxy's next reconnect check, beside a control connection that must too",
	Labels:   []string{"area:peers"},
	Trials:   5,
	Noun:     "trials",
	Params: []suite.Param{
		suite.Int("PARALLEL", 5, 1, 10, "nodes whose trials run side by side (the trials spread over them)"),
	},
	StepsFor: func(p suite.Values) []string {
		return []string{
			fmt.Sprintf("Setup: %s, nbthread 1, localpeer local; one peers section with `local` on a port the test reaches and `remote` on a port where nothing listens; table `marker` (type ip, size 100, expire 1h, store gpc0). Precondition: the section's initial resync is finished (else HAProxy would ask harp's peer to teach it during a trial, and the answer would refresh the alive flag): harp's peer, as `remote`, answers HAProxy's resync request in a session of its own with resync finished (an up-to-date peer with nothing to teach), closed before the trials; a build that does not ask finishes by its 5 s timeout.", suiteenv.LanesText(p.Int("PARALLEL"), "trial")),
			"Positive control, once (on a node of its own, started once the trials' nodes are up and run beside the trials, when there are several): a replacement that HAProxy is told to kill (`shutdown session`) must be seen closed by harp within 2 s, or the run is INCONCLUSIVE.",
			"Trial: once no session of the remote peer is up, no stream of an earlier one is left (show sess) and HAProxy's reconnect timer has not expired, harp's peers client completes a handshake as `remote` (the first connection); a second client completes a handshake as `remote` (the replacement); HAProxy must release the first session (its socket closed by HAProxy) within 2 s. An attempt of HAProxy's own to connect that a handshake superseded goes on retrying until its connects fail (3 s) and its release clears the alive flag too: a control may start beside one (a trial's replacement waits for it to end), and a watched session that HAProxy closes after one ended is discarded and run again. The replacement is then watched, sending nothing, through HAProxy's next reconnect check: until show peers shows that check passed (the reconnect timer set again to its full period with the session still established, before harp's first heartbeat), else until the check as `reconnect=` gives it (rounded down to seconds) plus 1.5 s; that check, rounded up, must come before harp's first heartbeat (3 s after the handshake, like HAProxy's), which would refresh the alive flag, else the attempt is discarded and run again, as is one whose handshake collided with HAProxy's own attempt to connect (coll up; 3 attempts, then INCONCLUSIVE).",
			"Expectation: the replacement stays established through the check: its socket stays open and `show peers` shows the remote peer established. A violation is HAProxy's own kill: the socket closed by HAProxy, show peers no longer established, no_hbt up by one and proto_err unchanged; any other closing is INCONCLUSIVE.",
			"Control, beside each trial (before it, on its node): the same trial with one handshake and no replacement must stay established through its own check; if it does not, the verdict is INCONCLUSIVE. ",
		}
	},
	Run: run,
})

const (
	// show peers rounds timers down to seconds: the check comes within a
	// second of what it shows; the window waits half a second more.
	margin    = 1500 * time.Millisecond
	release   = 2 * time.Second
	section   = "sync"
	localPeer = "local"
	remote    = "remote"
	// cleanTries bounds the attempts at a trial that was not the scenario
	// under test (rerun), and the positive control's.
	cleanTries = 3
)

// Config renders the suite's config.
func Config() (string, error) {
	return config.Render("peer.cfg.tmpl", map[string]any{"Threads": 1, "LocalPeer": localPeer, "Section": section,
		"PeerPort": 10000, "Remote": remote, "DeadPort": 10999, "Table": "marker", "Store": "gpc0"})
}

// Evidence is what one trial (beside its control) recorded.
type Evidence struct {
	Control       verdict.Trial `json:"control"` // its own evidence is the control's
	RemoteBefore  string        `json:"remote_before,omitempty"`
	RemoteAfter   string        `json:"remote_after,omitempty"`
	ClosedAfterMs int64         `json:"closed_after_ms,omitempty"`
	Facts         judge.Facts   `json:"facts"`
}

func run(ctx context.Context, env *suiteenv.Env) verdict.Outcome {
	cfg, err := Config()
	if err != nil {
		return verdict.Outcome{Err: err}
	}
	// With several nodes, the positive control gets a node of its own and
	// runs beside the trials (its failure still makes the run
	// INCONCLUSIVE); its node starts once the trials' nodes are up, so
	// that it does not slow theirs. With one, it runs first, as the
	// issue's steps do.
	lanes := min(env.Params.Int("PARALLEL"), env.Trials)
	o := node.Options{Config: cfg, Ports: []string{"10000/tcp"}}
	nodes, unmet, err := env.StartNodes(ctx, lanes, o, 1)
	if nodes == nil {
		return verdict.Outcome{Unmet: unmet, Err: err}
	}
	probes, unmet, err := suiteenv.EachNode(ctx, nodes, prepare)
	if probes == nil {
		return verdict.Outcome{Unmet: unmet, Err: err}
	}
	positive := suiteenv.Beside(func() (string, error) { return positiveControl(ctx, env, o, probes, lanes) })
	if lanes == 1 {
		if u, err := positive(); err != nil || u != "" {
			return verdict.Outcome{Unmet: u, Err: err}
		}
	}
	var controlsFailed atomic.Int64
	out := env.RunTrialsOn(ctx, nodes, func(ctx context.Context, n *node.Node, t *verdict.Trial) error {
		p := probes[slices.Index(nodes, n)]
		// Control first, then the trial, each on fresh connections.
		c, err := p.cleanTrial(ctx, t.N, false)
		if err != nil {
			return fmt.Errorf("control: %w", err)
		}
		if c.Violation != "" || c.Unmet != "" {
			controlsFailed.Add(1)
		}
		env.Logf("#3519 on %s: control %d of %d: %s", env.Image.Name, t.N, env.Trials, suiteenv.Summary(c))
		tr, err := p.cleanTrial(ctx, t.N, true)
		tr.Evidence.(*Evidence).Control = c
		*t = tr
		if p.resync != "" { // the node's precondition, in its first trial
			t.Notef("%s", p.resync)
			p.resync = ""
		}
		if err == nil && lanes > 1 && t.N+lanes > env.Trials {
			env.StopNode(ctx, n) // the node's last trial: its stop overlaps the others'
		}
		return err
	})
	if u, err := positive(); out.Err == nil {
		out.Unmet, out.Err = u, err
	}
	if failed := controlsFailed.Load(); failed > 0 {
		out.ControlFailed = fmt.Sprintf("control (one connection, no replacement) closed early in %d of %d trials", failed, len(out.Trials))
	}
	return out
}

// positiveControl: a replacement HAProxy is told to kill is seen closed
// (killControl), on the only node before its trials, else on a node of
// its own (o, named apart) started once the trials' nodes are up.
func positiveControl(ctx context.Context, env *suiteenv.Env, o node.Options, probes []*peerProbe, lanes int) (unmet string, err error) {
	if lanes == 1 {
		return probes[0].killControl(ctx, cleanTries, release)
	}
	o.Name = "node-3519-positive"
	n, unmet, err := env.StartNode(ctx, o, 1)
	if n == nil {
		return unmet, err
	}
	defer env.StopNode(ctx, n) // its stop overlaps the trials
	check, unmet, err := prepare(ctx, n)
	if check == nil {
		return unmet, err
	}
	return check.killControl(ctx, cleanTries, release)
}

// peerProbe plays the remote peer against one node.
type peerProbe struct {
	*remotepeer.Probe
	resync string // how the node's initial resync finished, noted in its first trial
}

// prepare makes a node's probe once its initial resync finished, harp's
// peer answering HAProxy's resync request (answerResync) rather than
// letting it run to its 5 s timeout.
func prepare(ctx context.Context, n *node.Node) (*peerProbe, string, error) {
	addr, err := n.Addr(ctx, "10000/tcp")
	if err != nil {
		return nil, "", err
	}
	p := &peerProbe{Probe: &remotepeer.Probe{Node: n, Addr: addr, Section: section, Local: localPeer, Remote: remote}}
	var unmet string
	if p.resync, unmet, err = p.answerResync(ctx, 20*time.Second); err != nil || unmet != "" {
		return nil, unmet, err
	}
	return p, "", nil
}

// cleanTrial runs a trial again (fresh connections) while it was not the
// scenario under test (rerun); the retries are noted in the trial.
func (p *peerProbe) cleanTrial(ctx context.Context, n int, replace bool) (verdict.Trial, error) {
	return suiteenv.Rerun(cleanTries, rerun, func() (verdict.Trial, error) { return p.trial(ctx, n, replace) })
}

// rerun says whether an attempt is not the scenario under test, for a
// reason that a fresh attempt may not have: a collision with HAProxy's own
// attempt (which releases a session of HAProxy's), a random collision
// backoff that put HAProxy's check after harp's first heartbeat, or the
// release of a superseded attempt of HAProxy's during the window.
func rerun(unmet string) bool {
	return strings.HasPrefix(unmet, collided) || strings.HasPrefix(unmet, judge.LateCheck) || strings.HasPrefix(unmet, judge.AttemptEnded)
}

// trial runs one trial; with replace=false it is the control (one
// connection, no replacement). What could not be set up is an unmet
// precondition; what the window showed is judged by judge.Trial.
func (p *peerProbe) trial(ctx context.Context, n int, replace bool) (t verdict.Trial, err error) {
	t.N = n
	ev := &Evidence{}
	t.Evidence = ev
	// A control may start beside an attempt of HAProxy's still retrying:
	// its check comes within 2 s of the handshake, mostly before that
	// attempt ends (3 s after it began). A replacement's check may come
	// later: it waits for the attempt to be over, which saves the runs
	// that it would discard.
	s, unmet, err := p.supersede(ctx, replace, !replace, release)
	defer peers.CloseAll(s.Conns)
	if err != nil || unmet != "" {
		t.Unmet = unmet
		return t, err
	}
	ev.RemoteBefore = s.Before.Raw
	t.Show("show peers, remote peer, before the window", s.Before.Raw)
	t.Notef("remote peer before the window: %s", summary(s.Before))
	// The replacement's check must come before harp's first heartbeat,
	// which sets the alive flag, or a buggy build would pass.
	w, after, err := p.watchCheck(ctx, s, judge.Facts{Replace: replace}.What(), replace, margin)
	f := judge.Facts{Replace: replace, Before: judge.StateOf(s.Before), NoCheck: w.NoCheck, CheckAfterHeartbeat: w.Late,
		AttemptEnded: w.AttemptEnded, Window: w.Window, CheckPassed: w.CheckPassed, Closing: w.Closing,
		ClosedAfter: w.ClosedAfter, After: obs.Opt(obs.Map(w.After.Of, judge.StateOf))}
	if ev.Facts = f; err != nil {
		return t, err
	}
	ev.RemoteAfter = after.Raw
	t.Show("show peers, remote peer, after the window", after.Raw)
	t.Notef("remote peer after the window: %s", summary(after))
	if why, ok := f.Closing.Get(); ok {
		ev.ClosedAfterMs = f.ClosedAfter.Milliseconds()
		t.Notef("%s closed by HAProxy %s after the first socket was closed (%s)", f.What(), f.ClosedAfter.Round(time.Millisecond), why)
	}
	t.Violation, t.Unmet = judge.Trial(f)
	if t.Violation == "" && t.Unmet == "" {
		if f.CheckPassed > 0 {
			t.Notef("%s established through HAProxy's reconnect check: show peers showed the check passed %s into the window (reconnect timer set again, session established), before harp's first heartbeat", f.What(), f.CheckPassed.Round(time.Millisecond))
		} else {
			t.Notef("%s established for the whole %s window (HAProxy's reconnect check plus %s)", f.What(), f.Window, margin)
		}
	}
	return t, nil
}

func summary(p cliout.Peer) string {
	return fmt.Sprintf("last_status=%s last_hdshk=%s session=%v reconnect=%s heartbeat=%s new_conn=%d coll=%d no_hbt=%d", p.LastStatus, p.LastHdshk, p.Session, p.Fields["reconnect"], p.Fields["heartbeat"], p.Int("new_conn"), p.Int("coll"), p.Int("no_hbt"))
}

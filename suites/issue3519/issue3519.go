// Package issue3519 encodes haproxy/haproxy#3519: "Peers: releasing a
// superseded connection clears the replacement alive flag".
package issue3519

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/harp-project/harp/harness/cliout"
	"github.com/harp-project/harp/harness/config"
	"github.com/harp-project/harp/harness/node"
	"github.com/harp-project/harp/harness/obs"
	"github.com/harp-project/harp/harness/peers"
	"github.com/harp-project/harp/harness/remotepeer"
	"github.com/harp-project/harp/harness/scenario"
	"github.com/harp-project/harp/harness/verdict"
	"github.com/harp-project/harp/suites/issue3519/judge"
)

// When a peer connects again while its previous
// session is up (a collision), HAProxy keeps the new session and kills the
// old one; releasing the old applet clears the peer's alive flag although
// the peer now belongs to the new session, so at the next reconnect check
// (50 to 2049 ms later, the collision backoff) the sync task takes the
// replacement for dead and kills it.
var Suite = scenario.Register(&scenario.Scenario{
	ID:       "3519",
	Upstream: "haproxy/haproxy#3519",
	Title:    "Peers: releasing a superseded connection clears the replacement alive flag",
	Summary:  "harp's peers client connects as `remote` twice (a collision); the replacement must survive HAProxy's next reconnect check, beside a control connection that must too",
	Labels:   []string{"area:peers"},
	Trials:   5,
	Noun:     "trials",
	Params: []scenario.Param{
		scenario.Int("PARALLEL", 5, 1, 10, "nodes whose trials run side by side (the trials spread over them)"),
	},
	StepsFor: func(p scenario.Values) []string {
		return []string{
			fmt.Sprintf("Setup: %s, nbthread 1, localpeer local; one peers section with `local` on a port the test reaches and `remote` on a port where nothing listens; table `marker` (type ip, size 100, expire 1h, store gpc0). Precondition: the section's initial resync is finished (else HAProxy would ask harp's peer to teach it during a trial, and the answer would refresh the alive flag): harp's peer, as `remote`, answers HAProxy's resync request in a session of its own with resync finished (an up-to-date peer with nothing to teach), closed before the trials; a build that does not ask finishes by its 5 s timeout.", scenario.LanesText(p.Int("PARALLEL"), "trial")),
			"Positive control, once (on a node of its own beside the trials, when there are several): a replacement that HAProxy is told to kill (`shutdown session`) must be seen closed by harp within 2 s, or the run is INCONCLUSIVE.",
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
	rounding = time.Second
	margin   = 1500 * time.Millisecond
	release  = 2 * time.Second
	settle   = 15 * time.Second
	// A handshake may follow HAProxy's reconnect timer closely: one that
	// collides with HAProxy's own attempt anyway raises coll, and the
	// attempt is run again (cleanTrial). Waiting for a timer shown as 1s
	// instead would often wait out HAProxy's own attempt (3 s: its
	// connects to the dead port are refused and retried).
	quiet     = 0
	checkPoll = 100 * time.Millisecond
	// A reconnect timer shown at 3 s or more right after it was lower was
	// set again to HAProxy's 5 s period: the check found the peer alive.
	passed    = 3 * time.Second
	section   = "sync"
	localPeer = "local"
	remote    = "remote"
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

func run(ctx context.Context, env *scenario.Env) verdict.Outcome {
	cfg, err := Config()
	if err != nil {
		return verdict.Outcome{Err: err}
	}
	// With several nodes, the positive control gets a node of its own and
	// runs beside the trials (its failure still makes the run
	// INCONCLUSIVE); with one, it runs first, as the issue's steps do.
	lanes := min(env.Params.Int("PARALLEL"), env.Trials)
	count := lanes
	if lanes > 1 {
		count++
	}
	nodes, unmet, err := env.StartNodes(ctx, count, node.Options{Config: cfg, Ports: []string{"10000/tcp"}}, 1)
	if nodes == nil {
		return verdict.Outcome{Unmet: unmet, Err: err}
	}
	probes := make([]*peerProbe, len(nodes))
	unmets, errs := make([]string, len(nodes)), make([]error, len(nodes))
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			probes[i], unmets[i], errs[i] = prepare(ctx, n)
		}()
	}
	wg.Wait()
	byNode := map[*node.Node]*peerProbe{}
	for i, n := range nodes {
		if errs[i] != nil || unmets[i] != "" {
			if len(nodes) > 1 && unmets[i] != "" {
				unmets[i] = n.Name + ": " + unmets[i]
			}
			return verdict.Outcome{Unmet: unmets[i], Err: errs[i]}
		}
		byNode[n] = probes[i]
	}
	type control struct {
		unmet string
		err   error
	}
	positive := make(chan control, 1)
	if lanes == 1 {
		u, err := probes[0].positive(ctx)
		if err != nil || u != "" {
			return verdict.Outcome{Unmet: u, Err: err}
		}
		positive <- control{}
	} else {
		go func() {
			u, err := probes[lanes].positive(ctx)
			env.StopNode(ctx, probes[lanes].Node) // its stop overlaps the trials
			positive <- control{u, err}
		}()
		nodes = nodes[:lanes]
	}
	var mu sync.Mutex
	controlsFailed := 0
	out := env.RunTrialsOn(ctx, nodes, func(ctx context.Context, n *node.Node, t *verdict.Trial) error {
		p := byNode[n]
		// Control first, then the trial, each on fresh connections.
		c, err := p.cleanTrial(ctx, t.N, false)
		if err != nil {
			return fmt.Errorf("control: %w", err)
		}
		if c.Violation != "" || c.Unmet != "" {
			mu.Lock()
			controlsFailed++
			mu.Unlock()
		}
		env.Logf("#3519 on %s: control %d of %d: %s", env.Image.Name, t.N, env.Trials, scenario.Summary(c))
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
	if res := <-positive; out.Err == nil {
		out.Unmet, out.Err = res.unmet, res.err
	}
	if controlsFailed > 0 {
		out.ControlFailed = fmt.Sprintf("control (one connection, no replacement) closed early in %d of %d trials", controlsFailed, len(out.Trials))
	}
	return out
}

// prepare makes a node's probe once its initial resync finished. harp's
// peer, as the remote peer it plays, answers HAProxy's resync request in a
// session of its own (an up-to-date peer with nothing to teach says resync
// finished), so the resync ends when HAProxy hears it rather than at its
// 5 s timeout; that session is closed before any trial. A build that never
// asks still finishes by its timeout.
func prepare(ctx context.Context, n *node.Node) (*peerProbe, string, error) {
	addr, err := n.Addr(ctx, "10000/tcp")
	if err != nil {
		return nil, "", err
	}
	p := &peerProbe{Probe: &remotepeer.Probe{Node: n, Addr: addr, Section: section, Local: localPeer, Remote: remote}}
	t0 := time.Now()
	c, status, err := p.Dial(ctx, peers.Options{Answer: true})
	if err != nil {
		return nil, "", fmt.Errorf("the resync session: %w", err)
	}
	unmet := p.WaitResync(ctx, 20*time.Second)
	took := time.Since(t0).Round(time.Millisecond)
	switch {
	case c == nil:
		p.resync = fmt.Sprintf("initial resync finished by HAProxy's own timeout after %s (its handshake with harp's peer was answered %d)", took, status)
	case asked(c):
		p.resync = fmt.Sprintf("initial resync finished %s after the node was ready: HAProxy asked harp's peer (as %s, in a session of its own, closed before the trials) and harp answered resync finished", took, remote)
	default:
		p.resync = fmt.Sprintf("initial resync finished %s after the node was ready, without asking harp's peer", took)
	}
	if c != nil {
		c.Close()
	}
	if unmet != "" {
		return nil, unmet, nil
	}
	return p, "", nil
}

// asked says whether HAProxy sent the session a resync request.
func asked(c *peers.Conn) bool {
	for _, e := range c.Events() {
		if e.Msg.Class == peers.ClassControl && e.Msg.Type == peers.CtrlResyncRequest {
			return true
		}
	}
	return false
}

// peerProbe plays the remote peer against one node.
type peerProbe struct {
	*remotepeer.Probe
	handshake time.Time // of the session last dialled: its first heartbeat is due 3 s later
	resync    string    // how the node's initial resync finished, noted in its first trial
	// HAProxy's own attempts to connect that a handshake superseded and
	// that were still retrying when the last trial connected (show sess).
	attempts []string
}

// cleanTries bounds the attempts at a trial whose handshake collided with
// HAProxy's own connection attempt to the remote peer.
const cleanTries = 3

// cleanTrial runs a trial again (fresh connections) while one of its
// handshakes collided with HAProxy's own attempt to connect to the remote
// peer: that collision releases a session of HAProxy's, which is not the
// scenario under test. The retries are noted in the trial.
func (p *peerProbe) cleanTrial(ctx context.Context, n int, replace bool) (verdict.Trial, error) {
	var notes []string
	for try := 1; ; try++ {
		t, err := p.trial(ctx, n, replace)
		if err != nil || !rerun(t.Unmet) || try == cleanTries {
			t.Notes = append(notes, t.Notes...)
			return t, err
		}
		notes = append(notes, fmt.Sprintf("attempt %d discarded: %s", try, t.Unmet))
	}
}

const collided = "collision with HAProxy's own session"

// rerun says whether an attempt is not the scenario under test, for a
// reason that a fresh attempt may not have: a collision with HAProxy's own
// attempt, a random collision backoff that put HAProxy's check after
// harp's first heartbeat, or the release of a superseded attempt of
// HAProxy's during the window.
func rerun(unmet string) bool {
	return strings.HasPrefix(unmet, collided) || strings.HasPrefix(unmet, lateCheck) || strings.HasPrefix(unmet, attemptEnded)
}

const (
	lateCheck    = judge.LateCheck
	attemptEnded = judge.AttemptEnded
)

// trial runs one trial; with replace=false it is the control (one
// connection, no replacement). What could not be set up is an unmet
// precondition; what the window showed is judged by judge.Trial.
func (p *peerProbe) trial(ctx context.Context, n int, replace bool) (t verdict.Trial, err error) {
	t.N = n
	ev := &Evidence{}
	t.Evidence = ev
	var conns []*peers.Conn
	defer func() { peers.CloseAll(conns) }()
	// A control may start beside an attempt of HAProxy's still retrying:
	// its check comes within 2 s of the handshake, mostly before that
	// attempt ends (3 s after it began). A replacement's check may come
	// later: it waits for the attempt to be over, which saves the runs
	// that it would discard.
	before, start, unmet, err := p.connect(ctx, replace, !replace, &conns)
	if err != nil || unmet != "" {
		t.Unmet = unmet
		return t, err
	}
	ev.RemoteBefore = before.Raw
	t.Blocks = append(t.Blocks, verdict.Block{Title: "show peers, remote peer, before the window", Text: before.Raw})
	t.Notes = append(t.Notes, "remote peer before the window: "+summary(before))
	f, after, err := p.window(ctx, conns[len(conns)-1], replace, start, before)
	if ev.Facts = f; err != nil {
		return t, err
	}
	ev.RemoteAfter = after.Raw
	t.Blocks = append(t.Blocks, verdict.Block{Title: "show peers, remote peer, after the window", Text: after.Raw})
	t.Notes = append(t.Notes, "remote peer after the window: "+summary(after))
	if why, ok := f.Closing.Get(); ok {
		ev.ClosedAfterMs = f.ClosedAfter.Milliseconds()
		t.Notes = append(t.Notes, fmt.Sprintf("%s closed by HAProxy %s after the first socket was closed (%s)", f.What(), f.ClosedAfter.Round(time.Millisecond), why))
	}
	t.Violation, t.Unmet = judge.Trial(f)
	if t.Violation == "" && t.Unmet == "" {
		if f.CheckPassed > 0 {
			t.Notes = append(t.Notes, fmt.Sprintf("%s established through HAProxy's reconnect check: show peers showed the check passed %s into the window (reconnect timer set again, session established), before harp's first heartbeat", f.What(), f.CheckPassed.Round(time.Millisecond)))
		} else {
			t.Notes = append(t.Notes, fmt.Sprintf("%s established for the whole %s window (HAProxy's reconnect check plus %s)", f.What(), f.Window, margin))
		}
	}
	return t, nil
}

// connect makes the first session, and with replace the replacement
// (closing the first), and checks that neither collided with a session
// of HAProxy's own and that the watched one is established; the
// connections made are added to conns, the watched one last. start is
// when the watched session became the only one.
func (p *peerProbe) connect(ctx context.Context, replace, keepAttempts bool, conns *[]*peers.Conn) (before cliout.Peer, start time.Time, unmet string, err error) {
	if p.attempts, err = p.Settled(ctx, quiet, settle, keepAttempts); err != nil {
		return before, start, "a session of the remote peer from before, or its stream, never ended", nil
	}
	r0, err := p.State(ctx)
	if err != nil {
		return before, start, "", err
	}
	coll := r0.Int("coll")
	dial := func(which string) (string, error) {
		c, status, err := p.Dial(ctx, peers.DefaultOptions)
		p.handshake = time.Now()
		if err != nil {
			return "", err
		}
		*conns = append(*conns, c)
		if status != peers.StatusSuccess {
			return fmt.Sprintf("%s handshake answered %d", which, status), nil
		}
		return "", nil
	}
	if unmet, err := dial("first"); err != nil || unmet != "" {
		return before, start, unmet, err
	}
	r1, err := p.Established(ctx, 5*time.Second)
	if err != nil {
		return before, start, "show peers never showed the first session established", nil
	}
	// The first handshake must not have replaced a session of HAProxy's own.
	if r1.Int("coll") != coll {
		return before, start, fmt.Sprintf("%s: the first handshake raised coll from %d to %d", collided, coll, r1.Int("coll")), nil
	}
	if replace {
		if unmet, err := dial("replacement"); err != nil || unmet != "" {
			return before, start, unmet, err
		}
		if unmet := released((*conns)[0]); unmet != "" {
			return before, start, unmet, nil
		}
	}
	start = time.Now()
	if before, err = p.State(ctx); err != nil {
		return before, start, "", err
	}
	if want := coll + map[bool]int64{false: 0, true: 1}[replace]; before.Int("coll") != want {
		return before, start, fmt.Sprintf("%s: coll went from %d to %d, want %d", collided, coll, before.Int("coll"), want), nil
	}
	if !before.Established() {
		return before, start, "show peers does not show the watched session established before the window", nil
	}
	return before, start, "", nil
}

// released waits until HAProxy has closed the superseded session's socket:
// the release whose side effect the issue is about.
func released(first *peers.Conn) string {
	if !first.WaitClosed(release) {
		return fmt.Sprintf("HAProxy did not release the superseded session within %s (its socket is still open)", release)
	}
	if byPeer, why := first.Ended(); !byPeer {
		return fmt.Sprintf("harp's client ended the superseded session itself: %v", why)
	}
	return ""
}

// window watches a session until HAProxy's next reconnect check (read from
// show peers before) plus a margin, sending nothing, and reads the remote
// peer's state after it.
func (p *peerProbe) window(ctx context.Context, watched *peers.Conn, replace bool, start time.Time, before cliout.Peer) (f judge.Facts, after cliout.Peer, err error) {
	f.Replace, f.Before = replace, judge.StateOf(before)
	d, never, ok := before.Delay("reconnect")
	if !ok || never {
		f.NoCheck = true
		return f, before, nil
	}
	f.Window = d + margin
	// harp's first heartbeat sets the alive flag: the replacement's check
	// must come before it, even rounded up, or a buggy build would pass.
	if f.Replace && time.Since(p.handshake)+d+rounding >= peers.DefaultOptions.Heartbeat {
		f.CheckAfterHeartbeat = true
		return f, before, nil
	}
	timer := time.NewTimer(f.Window)
	defer timer.Stop()
	poll := time.NewTicker(checkPoll)
	defer poll.Stop()
	// The window ends at the check once show peers shows it passed: the
	// timer set again to HAProxy's full reconnect period with the session
	// still established. Only in an answer read before harp's first
	// heartbeat (with a tenth of a second to spare), which sets the timer
	// again too; a kill sets it to at most 2049 ms.
	last, heartbeat := d, p.handshake.Add(peers.DefaultOptions.Heartbeat-100*time.Millisecond)
watch:
	for {
		select {
		case <-watched.Closed():
			at, why := watched.ClosedAt()
			if f.ClosedAfter, f.Closing = at.Sub(start), obs.Opt(obs.Value(fmt.Sprint(why))); !watched.ClosedByPeer() { // harp's side: what HAProxy would have done is unknown
				f.Closing = obs.Opt(obs.Failure[string]("harp's client ended the %s session itself: %v", f.What(), why))
			}
			// An attempt's release can only make HAProxy kill the session,
			// never keep it: one that ended, before or after this closing
			// (it cannot be told), leaves the closing unexplained.
			f.AttemptEnded = p.attemptEnded(ctx)
			break watch
		case <-timer.C:
			break watch
		case <-poll.C:
			r, err := p.State(ctx)
			cur, never, ok := r.Delay("reconnect")
			if err != nil || !ok || never {
				continue // a reading that failed decides nothing
			}
			if cur > last && cur >= passed && r.Established() && time.Now().Before(heartbeat) {
				f.CheckPassed = time.Since(start)
				break watch
			}
			last = cur
		case <-ctx.Done():
			return f, after, ctx.Err()
		}
	}
	after, err = p.State(ctx)
	f.After = obs.Opt(obs.From(judge.StateOf(after), err))
	return f, after, nil
}

// attemptEnded says whether an attempt of HAProxy's own that was still
// retrying when the watched session connected is gone from show sess (a
// failed reading says nothing).
func (p *peerProbe) attemptEnded(ctx context.Context) bool {
	if len(p.attempts) == 0 {
		return false
	}
	_, out, err := p.Streams(ctx)
	if err != nil {
		return false
	}
	for _, a := range p.attempts {
		if !slices.Contains(out, a) {
			return true
		}
	}
	return false
}

// positive checks, once, that harp sees a replacement closed when HAProxy
// is told to kill it (`shutdown session`): else a replacement that stays
// open would prove nothing. A kill by HAProxy's own reconnect check first
// (no_hbt up) does not count: it is tried again.
func (p *peerProbe) positive(ctx context.Context) (unmet string, err error) {
	why := ""
	for try := 1; try <= cleanTries; try++ {
		u, killedFirst, err := p.positiveOnce(ctx)
		if err != nil || (u == "" && !killedFirst) {
			return u, err
		}
		if why = u; killedFirst {
			why = "the reconnect check killed it first"
		}
		if strings.HasPrefix(u, "positive control failed") {
			return u, nil
		}
	}
	return "positive control could not be run: " + why, nil
}

// positiveOnce is one try; its connections are closed when it returns.
func (p *peerProbe) positiveOnce(ctx context.Context) (unmet string, killedFirst bool, err error) {
	var conns []*peers.Conn
	defer func() { peers.CloseAll(conns) }()
	before, _, u, err := p.connect(ctx, true, true, &conns) // it kills the replacement itself
	if err != nil || u != "" {
		return u, false, err
	}
	if err := p.Kill(ctx); err != nil {
		return "", false, fmt.Errorf("positive control: %w", err)
	}
	watched := conns[len(conns)-1]
	if !watched.WaitClosed(release) {
		return fmt.Sprintf("positive control failed: a replacement HAProxy was told to kill (shutdown session) was not seen closed within %s", release), false, nil
	}
	after, err := p.State(ctx)
	if err != nil {
		return "", false, err
	}
	if after.Int("no_hbt") != before.Int("no_hbt") || !watched.ClosedByPeer() {
		return "", true, nil
	}
	return "", false, nil
}

func summary(p cliout.Peer) string {
	return fmt.Sprintf("last_status=%s last_hdshk=%s session=%v reconnect=%s heartbeat=%s new_conn=%d coll=%d no_hbt=%d", p.LastStatus, p.LastHdshk, p.Session, p.Fields["reconnect"], p.Fields["heartbeat"], p.Int("new_conn"), p.Int("coll"), p.Int("no_hbt"))
}

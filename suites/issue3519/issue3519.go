// Package issue3519 encodes haproxy/haproxy#3519: "Peers: releasing a
// superseded connection clears the replacement alive flag".
package issue3519

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/harp-project/harp/harness/cliout"
	"github.com/harp-project/harp/harness/config"
	"github.com/harp-project/harp/harness/node"
	"github.com/harp-project/harp/harness/peers"
	"github.com/harp-project/harp/harness/remotepeer"
	"github.com/harp-project/harp/harness/scenario"
	"github.com/harp-project/harp/harness/verdict"
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
	Summary:  "harp's peers client connects as `remote` twice (a collision); the replacement must stay established 2.5 s, beside a control connection that must too",
	Labels:   []string{"area:peers"},
	Trials:   5,
	Noun:     "trials",
	Steps: []string{
		"Setup: one node, nbthread 1, localpeer local; one peers section with `local` on a port the test reaches and `remote` on a port where nothing listens; table `marker` (type ip, size 100, expire 1h, store gpc0). Precondition: the section's initial resync is finished (else HAProxy would ask harp's peer to teach it, and the answer would refresh the alive flag).",
		"Trial: harp's peers client completes a handshake as `remote` (the first connection); a second client completes a handshake as `remote` (the replacement); the first socket is closed; the replacement is watched for 2.5 s, sending nothing (its first heartbeat is due after 3 s, like HAProxy's).",
		"Expectation: the replacement stays established for the whole window: its socket stays open and `show peers` shows the remote peer established (last_status ESTA with a running session).",
		"Control, in the same run: the same trial with one handshake and no replacement must stay established for the window; if it does not, the verdict is INCONCLUSIVE.",
	},
	Run: run,
})

const (
	watch     = 2500 * time.Millisecond
	settle    = 15 * time.Second
	quiet     = time.Second // show peers rounds timers down to seconds
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
}

func run(ctx context.Context, env *scenario.Env) verdict.Outcome {
	cfg, err := Config()
	if err != nil {
		return verdict.Outcome{Err: err}
	}
	n, unmet, err := env.StartNode(ctx, node.Options{Config: cfg, Ports: []string{"10000/tcp"}}, 1)
	if n == nil {
		return verdict.Outcome{Unmet: unmet, Err: err}
	}
	addr, err := n.Addr(ctx, "10000/tcp")
	if err != nil {
		return verdict.Outcome{Err: err}
	}
	p := &peerProbe{&remotepeer.Probe{Node: n, Addr: addr, Section: section, Local: localPeer, Remote: remote}}
	if unmet := p.WaitResync(ctx, 20*time.Second); unmet != "" {
		return verdict.Outcome{Unmet: unmet}
	}
	controlsFailed := 0
	out := env.RunTrials(ctx, func(ctx context.Context, t *scenario.Trial) error {
		// Control first, then the trial, each on fresh connections.
		c, err := p.cleanTrial(ctx, t.N, false)
		if err != nil {
			return fmt.Errorf("control: %w", err)
		}
		if c.Violation != "" || c.Unmet != "" {
			controlsFailed++
		}
		env.Logf("#3519 on %s: control %d of %d: %s", env.Image.Name, t.N, env.Trials, scenario.Summary(c))
		tr, err := p.cleanTrial(ctx, t.N, true)
		tr.Evidence.(*Evidence).Control = c
		t.Trial = tr
		return err
	})
	if controlsFailed > 0 {
		out.ControlFailed = fmt.Sprintf("control (one connection, no replacement) closed early in %d of %d trials", controlsFailed, len(out.Trials))
	}
	return out
}

// peerProbe plays the remote peer against one node.
type peerProbe struct{ *remotepeer.Probe }

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
		if err != nil || !strings.HasPrefix(t.Unmet, collided) || try == cleanTries {
			t.Notes = append(notes, t.Notes...)
			return t, err
		}
		notes = append(notes, fmt.Sprintf("attempt %d discarded: %s", try, t.Unmet))
	}
}

const collided = "collision with HAProxy's own session"

// trial runs one trial; with replace=false it is the control (one
// connection, no replacement). What could not be set up is an unmet
// precondition; what the window showed is judged by Judge.
func (p *peerProbe) trial(ctx context.Context, n int, replace bool) (t verdict.Trial, err error) {
	t.N = n
	ev := &Evidence{}
	t.Evidence = ev
	var conns []*peers.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	before, start, unmet, err := p.connect(ctx, replace, &conns)
	if err != nil || unmet != "" {
		t.Unmet = unmet
		return t, err
	}
	ev.RemoteBefore = before.Raw
	t.Blocks = append(t.Blocks, verdict.Block{Title: "show peers, remote peer, before the window", Text: before.Raw})
	t.Notes = append(t.Notes, "remote peer before the window: "+summary(before))
	f, after, err := p.window(ctx, conns[len(conns)-1], replace, start)
	if err != nil {
		return t, err
	}
	ev.RemoteAfter = after.Raw
	t.Blocks = append(t.Blocks, verdict.Block{Title: "show peers, remote peer, after the window", Text: after.Raw})
	t.Notes = append(t.Notes, "remote peer after the window: "+summary(after))
	if f.Closed {
		ev.ClosedAfterMs = f.ClosedAfter.Milliseconds()
		t.Notes = append(t.Notes, fmt.Sprintf("%s closed %s after the first socket was closed (%s)", f.what(), f.ClosedAfter.Round(time.Millisecond), f.Why))
	}
	t.Violation, t.Unmet = Judge(f)
	if t.Violation == "" && t.Unmet == "" {
		t.Notes = append(t.Notes, fmt.Sprintf("%s established for the whole %s window", f.what(), watch))
	}
	return t, nil
}

// connect makes the first session, and with replace the replacement
// (closing the first), and checks that neither collided with a session
// of HAProxy's own and that the watched one is established; the
// connections made are added to conns, the watched one last. start is
// when the watched session became the only one.
func (p *peerProbe) connect(ctx context.Context, replace bool, conns *[]*peers.Conn) (before cliout.Peer, start time.Time, unmet string, err error) {
	if err := p.Settled(ctx, quiet, settle); err != nil {
		return before, start, "a session of the remote peer from the previous trial never ended", nil
	}
	r0, err := p.State(ctx)
	if err != nil {
		return before, start, "", err
	}
	coll := r0.Int("coll")
	dial := func(which string) (string, error) {
		c, status, err := p.Dial(ctx)
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
		(*conns)[0].Close()
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

// window watches a session for the window, sending nothing, and reads the
// remote peer's state after it.
func (p *peerProbe) window(ctx context.Context, watched *peers.Conn, replace bool, start time.Time) (f Facts, after cliout.Peer, err error) {
	f.Replace = replace
	timer := time.NewTimer(watch)
	defer timer.Stop()
	select {
	case <-watched.Closed():
		f.Closed, f.ClosedByPeer = true, watched.ClosedByPeer()
		at, why := watched.ClosedAt()
		f.ClosedAfter, f.Why = at.Sub(start), "no error given"
		if why != nil {
			f.Why = why.Error()
		}
	case <-timer.C:
	case <-ctx.Done():
		return f, after, ctx.Err()
	}
	after, err = p.State(ctx)
	f.EstablishedAfter = after.Established()
	return f, after, err
}

// Facts are what one trial's window showed.
type Facts struct {
	Replace          bool          // the trial (a replacement), or the control
	Closed           bool          // the watched socket closed within the window
	ClosedByPeer     bool          // HAProxy closed it, not harp's client
	ClosedAfter      time.Duration // after the first socket was closed
	Why              string        // how it closed
	EstablishedAfter bool          // show peers shows the remote peer established after the window
}

func (f Facts) what() string {
	if f.Replace {
		return "replacement"
	}
	return "control connection"
}

// Judge decides a trial from its window: HAProxy closing the watched
// session, with show peers agreeing, is the violation; any disagreement
// between the socket and show peers, or harp's client ending the session
// itself, is inconclusive.
func Judge(f Facts) (violation, unmet string) {
	switch {
	case f.Closed && !f.ClosedByPeer:
		return "", fmt.Sprintf("harp's client ended the %s session itself: %s", f.what(), f.Why)
	case f.Closed && !f.EstablishedAfter:
		return fmt.Sprintf("%s closed by HAProxy within %s", f.what(), watch), ""
	case f.Closed:
		return "", fmt.Sprintf("the %s socket closed but show peers still shows the peer established", f.what())
	case !f.EstablishedAfter:
		return "", fmt.Sprintf("the %s socket is open but show peers shows the peer not established", f.what())
	}
	return "", ""
}

func summary(p cliout.Peer) string {
	return fmt.Sprintf("last_status=%s last_hdshk=%s session=%v reconnect=%s heartbeat=%s new_conn=%d coll=%d no_hbt=%d", p.LastStatus, p.LastHdshk, p.Session, p.Fields["reconnect"], p.Fields["heartbeat"], p.Int("new_conn"), p.Int("coll"), p.Int("no_hbt"))
}

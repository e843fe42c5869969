// Package issue3519 encodes haproxy/haproxy#3519: "Peers: releasing a
// superseded connection clears the replacement alive flag".
package issue3519

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/harp-project/harp/harness/cliout"
	"github.com/harp-project/harp/harness/config"
	"github.com/harp-project/harp/harness/node"
	"github.com/harp-project/harp/harness/peers"
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
	p := &peerProbe{n: n, addr: addr}
	if unmet := p.waitResync(ctx); unmet != "" {
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
type peerProbe struct {
	n    *node.Node
	addr string
}

func (p *peerProbe) hello() peers.Hello {
	return peers.Hello{Remote: localPeer, Local: remote, PID: os.Getpid()}
}

// remote reads the remote peer's state from `show peers`.
func (p *peerProbe) remote(ctx context.Context) (cliout.Peer, error) {
	s, err := p.n.Section(ctx, node.Current, section)
	if err != nil {
		return cliout.Peer{}, err
	}
	r, ok := s.Peer(remote)
	if !ok {
		return r, fmt.Errorf("show peers lists no peer %q", remote)
	}
	return r, nil
}

// waitResync waits until the section's initial resync is finished, so
// that HAProxy will not ask the client to teach it during a trial.
func (p *peerProbe) waitResync(ctx context.Context) string {
	_, unmet, err := p.n.WaitResync(ctx, node.Current, 20*time.Second, section)
	if err != nil {
		return err.Error()
	}
	return unmet
}

// established waits until `show peers` shows the remote peer established.
func (p *peerProbe) established(ctx context.Context) (cliout.Peer, error) {
	var r cliout.Peer
	err := node.Poll(ctx, 5*time.Second, 50*time.Millisecond, func() (bool, error) {
		var err error
		r, err = p.remote(ctx)
		return err == nil && r.Established(), nil
	})
	return r, err
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
		if err != nil || !strings.HasPrefix(t.Unmet, collided) || try == cleanTries {
			t.Notes = append(notes, t.Notes...)
			return t, err
		}
		notes = append(notes, fmt.Sprintf("attempt %d discarded: %s", try, t.Unmet))
	}
}

const collided = "collision with HAProxy's own session"

// settled waits until no session of the remote peer is up (neither a
// trial's nor HAProxy's own attempt to connect to the dead port, which
// lasts about 3 s of every 5) and HAProxy's next attempt is at least
// quiet away (its `reconnect` timer): a handshake made then collides
// with nothing, and once it is established HAProxy stops attempting.
func (p *peerProbe) settled(ctx context.Context) error {
	return node.Poll(ctx, settle, 100*time.Millisecond, func() (bool, error) {
		r, err := p.remote(ctx)
		if err != nil || r.Session {
			return false, nil
		}
		d, never, ok := r.Delay("reconnect")
		return ok && (never || d >= quiet), nil
	})
}

// trial runs one trial; with replace=false it is the control (one
// connection, no replacement). A violation means the watched connection
// closed in the window; an unmet precondition, that the trial could not
// be set up or the evidence disagreed.
func (p *peerProbe) trial(ctx context.Context, n int, replace bool) (t verdict.Trial, err error) {
	t.N = n
	ev := &Evidence{}
	t.Evidence = ev
	if err := p.settled(ctx); err != nil {
		t.Unmet = "a session of the remote peer from the previous trial never ended"
		return t, nil
	}
	r0, err := p.remote(ctx)
	if err != nil {
		return t, err
	}
	coll := r0.Int("coll")
	first, status, err := peers.Dial(ctx, p.addr, p.hello(), peers.DefaultOptions)
	if err != nil {
		return t, err
	}
	if status != peers.StatusSuccess {
		t.Unmet = fmt.Sprintf("first handshake answered %d", status)
		return t, nil
	}
	defer first.Close()
	r1, err := p.established(ctx)
	if err != nil {
		t.Unmet = "show peers never showed the first session established"
		return t, nil
	}
	// The first handshake must not have replaced a session of HAProxy's own.
	if r1.Int("coll") != coll {
		t.Unmet = fmt.Sprintf("%s: the first handshake raised coll from %d to %d", collided, coll, r1.Int("coll"))
		return t, nil
	}
	watched := first
	if replace {
		second, status, err := peers.Dial(ctx, p.addr, p.hello(), peers.DefaultOptions)
		if err != nil {
			return t, err
		}
		if status != peers.StatusSuccess {
			t.Unmet = fmt.Sprintf("replacement handshake answered %d", status)
			return t, nil
		}
		defer second.Close()
		watched = second
		first.Close()
	}
	start := time.Now()
	before, err := p.remote(ctx)
	if err != nil {
		return t, err
	}
	if want := coll + map[bool]int64{false: 0, true: 1}[replace]; before.Int("coll") != want {
		t.Unmet = fmt.Sprintf("%s: coll went from %d to %d, want %d", collided, coll, before.Int("coll"), want)
		return t, nil
	}
	ev.RemoteBefore = before.Raw
	t.Blocks = append(t.Blocks, verdict.Block{Title: "show peers, remote peer, before the window", Text: before.Raw})
	t.Notes = append(t.Notes, "remote peer before the window: "+summary(before))
	if !before.Established() {
		t.Unmet = "show peers does not show the watched session established before the window"
		return t, nil
	}
	timer := time.NewTimer(watch)
	defer timer.Stop()
	closed := false
	select {
	case <-watched.Closed():
		closed = true
	case <-timer.C:
	case <-ctx.Done():
		return t, ctx.Err()
	}
	after, err := p.remote(ctx)
	if err != nil {
		return t, err
	}
	ev.RemoteAfter = after.Raw
	t.Blocks = append(t.Blocks, verdict.Block{Title: "show peers, remote peer, after the window", Text: after.Raw})
	t.Notes = append(t.Notes, "remote peer after the window: "+summary(after))
	what := "replacement"
	if !replace {
		what = "control connection"
	}
	switch {
	case closed && !watched.ClosedByPeer():
		_, why := watched.ClosedAt()
		t.Unmet = fmt.Sprintf("harp's client ended the %s session itself: %v", what, why)
	case closed && !after.Established():
		at, why := watched.ClosedAt()
		t.Violation = fmt.Sprintf("%s closed by HAProxy within %s", what, watch)
		t.Notes = append(t.Notes, fmt.Sprintf("%s closed %s after the first socket was closed (%v)", what, at.Sub(start).Round(time.Millisecond), why))
		ev.ClosedAfterMs = at.Sub(start).Milliseconds()
	case closed:
		t.Unmet = fmt.Sprintf("the %s socket closed but show peers still shows the peer established", what)
	case !after.Established():
		t.Unmet = fmt.Sprintf("the %s socket is open but show peers shows the peer not established", what)
	default:
		t.Notes = append(t.Notes, fmt.Sprintf("%s established for the whole %s window", what, watch))
	}
	return t, nil
}

func summary(p cliout.Peer) string {
	return fmt.Sprintf("last_status=%s last_hdshk=%s session=%v reconnect=%s heartbeat=%s new_conn=%d coll=%d no_hbt=%d", p.LastStatus, p.LastHdshk, p.Session, p.Fields["reconnect"], p.Fields["heartbeat"], p.Int("new_conn"), p.Int("coll"), p.Int("no_hbt"))
}

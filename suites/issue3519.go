package suites

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

// Issue3519: "Peers: releasing a superseded connection clears the
// replacement alive flag". When a peer connects again while its previous
// session is up (a collision), HAProxy keeps the new session and kills the
// old one; releasing the old applet clears the peer's alive flag although
// the peer now belongs to the new session, so at the next reconnect check
// (50 to 2049 ms later, the collision backoff) the sync task takes the
// replacement for dead and kills it.
var Issue3519 = scenario.Register(&scenario.Scenario{
	ID:       "3519",
	Upstream: "haproxy/haproxy#3519",
	Title:    "Peers: releasing a superseded connection clears the replacement alive flag",
	Owner:    "area:peers",
	Labels:   []string{"issue:3519", "area:peers"},
	Trials:   5,
	Noun:     "trials",
	Steps: []string{
		"Setup: one node, nbthread 1, localpeer local; one peers section with `local` on a port the test reaches and `remote` on a port where nothing listens; table `marker` (type ip, size 100, expire 1h, store gpc0). Precondition: the section's initial resync is finished (else HAProxy would ask harp's peer to teach it, and the answer would refresh the alive flag).",
		"Trial: harp's peers client completes a handshake as `remote` (the first connection); a second client completes a handshake as `remote` (the replacement); the first socket is closed; the replacement is watched for 2.5 s, sending nothing (its first heartbeat is due after 3 s, like HAProxy's).",
		"Expectation: the replacement stays established for the whole window: its socket stays open and `show peers` shows the remote peer established (last_status ESTA with a running session).",
		"Control, in the same run: the same trial with one handshake and no replacement must stay established for the window; if it does not, the verdict is INCONCLUSIVE.",
	},
	Run: run3519,
})

const (
	watch3519     = 2500 * time.Millisecond
	settle3519    = 15 * time.Second
	quiet3519     = time.Second // show peers rounds timers down to seconds
	section3519   = "sync"
	localPeer3519 = "local"
	remote3519    = "remote"
)

// Config3519 renders the suite's config.
func Config3519() (string, error) {
	return config.Render("peer.cfg.tmpl", map[string]any{"Threads": 1, "LocalPeer": localPeer3519, "Section": section3519,
		"PeerPort": 10000, "Remote": remote3519, "DeadPort": 10999, "Table": "marker", "Store": "gpc0"})
}

func run3519(ctx context.Context, env *scenario.Env) verdict.Outcome {
	cfg, err := Config3519()
	n, out, ok := startSingle(ctx, env, node.Options{Config: cfg, Name: "node-3519", Ports: []string{"10000/tcp"}}, err, 1)
	if !ok {
		return out
	}
	defer n.Stop(context.WithoutCancel(ctx))
	addr, err := n.Addr(ctx, "10000/tcp")
	if err != nil {
		return verdict.Outcome{Err: err}
	}
	p := &peerProbe{n: n, addr: addr}
	if unmet := p.waitResync(ctx); unmet != "" {
		out.Unmet = unmet
		return out
	}
	controlsFailed := 0
	for i := 1; i <= env.Trials; i++ {
		// Control first, then the trial, each on fresh connections.
		c, err := p.cleanTrial(ctx, i, false)
		if err != nil {
			out.Err = fmt.Errorf("control %d: %w", i, err)
			return out
		}
		if c.Violation != "" || c.Unmet != "" {
			controlsFailed++
		}
		env.Logf("#3519 on %s: control %d of %d: %s", env.Image.Name, i, env.Trials, trialSummary(c))
		t, err := p.cleanTrial(ctx, i, true)
		if err != nil {
			out.Err = fmt.Errorf("trial %d: %w", i, err)
			return out
		}
		t.Evidence["control"] = c
		out.Trials = append(out.Trials, t)
		env.Logf("#3519 on %s: trial %d of %d: %s", env.Image.Name, i, env.Trials, trialSummary(t))
	}
	if controlsFailed > 0 {
		out.ControlFailed = fmt.Sprintf("control (one connection, no replacement) closed early in %d of %d trials", controlsFailed, env.Trials)
	}
	return out
}

// peerProbe plays the remote peer against one node.
type peerProbe struct {
	n    *node.Node
	addr string
}

func (p *peerProbe) hello() peers.Hello {
	return peers.Hello{Remote: localPeer3519, Local: remote3519, PID: os.Getpid()}
}

// remote reads the remote peer's state from `show peers`.
func (p *peerProbe) remote(ctx context.Context) (cliout.Peer, cliout.PeersSection, error) {
	pid, err := p.n.CurrentWorker(ctx)
	if err != nil {
		return cliout.Peer{}, cliout.PeersSection{}, err
	}
	raw, err := p.n.Worker(ctx, pid, "show peers")
	if err != nil {
		return cliout.Peer{}, cliout.PeersSection{}, err
	}
	secs, err := cliout.ParsePeers(raw)
	if err != nil {
		return cliout.Peer{}, cliout.PeersSection{}, err
	}
	s, ok := cliout.FindSection(secs, section3519)
	if !ok {
		return cliout.Peer{}, s, fmt.Errorf("show peers lists no section %q", section3519)
	}
	r, ok := s.Peer(remote3519)
	if !ok {
		return r, s, fmt.Errorf("show peers lists no peer %q", remote3519)
	}
	return r, s, nil
}

// waitResync waits until the section's initial resync is finished, so
// that HAProxy will not ask the client to teach it during a trial.
func (p *peerProbe) waitResync(ctx context.Context) string {
	var flags uint64
	err := node.Poll(ctx, 20*time.Second, 200*time.Millisecond, func() (bool, error) {
		_, s, err := p.remote(ctx)
		flags = s.Flags
		return err == nil && s.ResyncFinished(), nil
	})
	if err != nil {
		return fmt.Sprintf("initial resync of section %s never finished (flags=0x%x after 20s)", section3519, flags)
	}
	return ""
}

// established waits until `show peers` shows the remote peer established.
func (p *peerProbe) established(ctx context.Context) (cliout.Peer, error) {
	var r cliout.Peer
	err := node.Poll(ctx, 5*time.Second, 50*time.Millisecond, func() (bool, error) {
		var err error
		r, _, err = p.remote(ctx)
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
// quiet3519 away (its `reconnect` timer): a handshake made then collides
// with nothing, and once it is established HAProxy stops attempting.
func (p *peerProbe) settled(ctx context.Context) error {
	return node.Poll(ctx, settle3519, 100*time.Millisecond, func() (bool, error) {
		r, _, err := p.remote(ctx)
		if err != nil || r.Session {
			return false, nil
		}
		d, never, ok := r.Delay("reconnect")
		return ok && (never || d >= quiet3519), nil
	})
}

// trial runs one trial; with replace=false it is the control (one
// connection, no replacement). A violation means the watched connection
// closed in the window; an unmet precondition, that the trial could not
// be set up or the evidence disagreed.
func (p *peerProbe) trial(ctx context.Context, n int, replace bool) (t verdict.Trial, err error) {
	t.N = n
	t.Evidence = map[string]any{}
	mark, t0 := p.n.Mark(), time.Now()
	defer func() {
		t.Duration = time.Since(t0)
		t.Exchanges = p.n.Transcript(mark)
	}()
	if err := p.settled(ctx); err != nil {
		t.Unmet = "a session of the remote peer from the previous trial never ended"
		return t, nil
	}
	r0, _, err := p.remote(ctx)
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
	before, _, err := p.remote(ctx)
	if err != nil {
		return t, err
	}
	if want := coll + map[bool]int64{false: 0, true: 1}[replace]; before.Int("coll") != want {
		t.Unmet = fmt.Sprintf("%s: coll went from %d to %d, want %d", collided, coll, before.Int("coll"), want)
		return t, nil
	}
	t.Evidence["remote_before"] = before.Raw
	t.Blocks = append(t.Blocks, verdict.Block{Title: "show peers, remote peer, before the window", Text: before.Raw})
	t.Notes = append(t.Notes, "remote peer before the window: "+summary(before))
	if !before.Established() {
		t.Unmet = "show peers does not show the watched session established before the window"
		return t, nil
	}
	timer := time.NewTimer(watch3519)
	defer timer.Stop()
	closed := false
	select {
	case <-watched.Closed():
		closed = true
	case <-timer.C:
	case <-ctx.Done():
		return t, ctx.Err()
	}
	after, _, err := p.remote(ctx)
	if err != nil {
		return t, err
	}
	t.Evidence["remote_after"] = after.Raw
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
		t.Violation = fmt.Sprintf("%s closed by HAProxy within %s", what, watch3519)
		t.Notes = append(t.Notes, fmt.Sprintf("%s closed %s after the first socket was closed (%v)", what, at.Sub(start).Round(time.Millisecond), why))
		t.Evidence["closed_after_ms"] = at.Sub(start).Milliseconds()
	case closed:
		t.Unmet = fmt.Sprintf("the %s socket closed but show peers still shows the peer established", what)
	case !after.Established():
		t.Unmet = fmt.Sprintf("the %s socket is open but show peers shows the peer not established", what)
	default:
		t.Notes = append(t.Notes, fmt.Sprintf("%s established for the whole %s window", what, watch3519))
	}
	return t, nil
}

func summary(p cliout.Peer) string {
	return fmt.Sprintf("last_status=%s last_hdshk=%s session=%v reconnect=%s heartbeat=%s new_conn=%d coll=%d no_hbt=%d", p.LastStatus, p.LastHdshk, p.Session, p.Fields["reconnect"], p.Fields["heartbeat"], p.Int("new_conn"), p.Int("coll"), p.Int("no_hbt"))
}

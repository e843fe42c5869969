package peerfuzz

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/harp-project/harp/harness/core/cliout"
	"github.com/harp-project/harp/harness/core/text"
	"github.com/harp-project/harp/harness/live/cli"
	"github.com/harp-project/harp/harness/live/node"
	"github.com/harp-project/harp/harness/live/peers"
)

// Finding is what a detector saw after an input.
type Finding struct {
	// Detector: exit (a worker exited, or the master), crash (on a
	// signal), watchdog (a warning or panic), spinning (CPU while the
	// input is idle), cli (the CLI stopped answering), memory (pools keep
	// growing), vanished (the node's container or its ports are gone).
	Detector string `json:"detector"`
	What     string `json:"what"`
	Evidence string `json:"evidence,omitempty"` // the node's log lines, show info
	// Delayed: seen by the control before the next input, not by the
	// detectors right after this one (the node died after they looked).
	Delayed bool `json:"delayed,omitempty"`
}

func (f Finding) String() string { return f.Detector + ": " + f.What }

// Firm says whether the finding rests on HAProxy's own words (its log, a
// value of show info) rather than on what harp could not reach: a silent
// CLI or a node whose container or ports are gone is a finding only when
// a fresh node agrees.
func (f Finding) Firm() bool { return f.Detector != "cli" && f.Detector != "vanished" }

// Same says whether two findings are the same failure for the minimizer:
// a worker that stopped serving (a crash, an exit, the watchdog: one fault
// seen at different moments) is one; spinning and memory growth are each
// their own. A finding that is not firm (a silent CLI, a node gone) is the
// same only as one of its own kind: a slow harp confirms no crash.
func Same(a, b *Finding) bool {
	if a == nil || b == nil {
		return false
	}
	if !a.Firm() || !b.Firm() {
		return a.Detector == b.Detector
	}
	group := func(d string) string {
		switch d {
		case "crash", "exit", "watchdog":
			return "stopped"
		}
		return d
	}
	return group(a.Detector) == group(b.Detector)
}

// ErrInterrupted wraps the context's error when harp was interrupted: an
// interrupt is never a finding.
var ErrInterrupted = errors.New("interrupted")

func interrupted(ctx context.Context) error { return fmt.Errorf("%w: %w", ErrInterrupted, ctx.Err()) }

// Thresholds of the detectors.
const (
	spinIdlePct = 30 // show info Idle_pct below this, twice, while nothing is sent
	memoryGrow  = 64 // MB of pools used above the fresh node's control reading
	// A show info that takes this many times the control's is stuck (when
	// longer than Timing.Stuck), up to maxStuck.
	stuckFactor = 20
	maxStuck    = time.Minute
	segmentGap  = 2 * time.Millisecond
	writeBound  = 5 * time.Second // a write HAProxy does not take in this long ends the steps
)

// Timing is how long the target waits for what; the zero value is the
// defaults (tests shorten them).
type Timing struct {
	// Stuck is the least time show info gets before the CLI is called
	// stuck (15 s): a loaded machine is slow, not stuck.
	Stuck   time.Duration
	Silence time.Duration // how long a silent end stays open (2 s)
	FinWait time.Duration // how long harp waits for HAProxy's close after its FIN (1 s)
	Sample  time.Duration // between two Idle_pct readings (1 s)
	Fate    time.Duration // how long a silent worker's exit is waited for (5 s)
	// Window is how long the spin detector samples after a silent end
	// (2 s: two more readings): the spin may start when harp closes, after
	// the silence.
	Window time.Duration
	// Watch is how long a confirmation watches the fresh node after the
	// input when nothing was seen at once (5 s): a node that dies after
	// the detectors looked.
	Watch time.Duration
}

func (t Timing) with() Timing {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&t.Stuck, 15*time.Second)
	def(&t.Silence, 2*time.Second)
	def(&t.FinWait, time.Second)
	def(&t.Sample, time.Second)
	def(&t.Fate, 5*time.Second)
	def(&t.Window, 2*time.Second)
	def(&t.Watch, 5*time.Second)
	return t
}

// stuckBound is how long show info gets after an input: generous, and
// longer on a machine whose control read was slow.
func (t Timing) stuckBound(control time.Duration) time.Duration {
	b := t.Stuck
	if k := min(stuckFactor*control, maxStuck); k > b {
		b = k
	}
	return b
}

// Node is what the target needs of a node (a *node.Node).
type Node interface {
	Addr(ctx context.Context, port string) (string, error)
	Logs(ctx context.Context) (string, error)
	Info(ctx context.Context, pid int) (cliout.Info, error)
	Running(ctx context.Context) (bool, int, error)
	Restart(ctx context.Context, timeout time.Duration) error
}

// Target is a node whose peer port is fuzzed.
type Target struct {
	Node   Node
	Timing Timing
	// send replaces the peer connection (tests); nil: sendPeer.
	send func(ctx context.Context, addr string, in Input) error
	base float64 // PoolUsed_MB at the fresh node's first control
	read bool
	mark int // the length of the logs the detectors have judged
	// latency is the last control's show info: the machine's pace, which
	// bounds the next control.
	latency time.Duration
	dirty   bool // an input was sent since the node started
}

// Health is a control read of the node: is it up, does show info answer
// and how fast, is the worker idle.
type Health struct {
	Latency time.Duration // show info's round trip
	Sick    *Finding      // what is wrong with the node (nil: healthy)
}

var peerPort = fmt.Sprintf("%d/tcp", PeerPort)

// Fresh makes the node one no input has touched: a node an input was
// sent to is restarted, whether it still runs or not (a spinning or
// leaking worker runs on, and would trigger anything).
func (t *Target) Fresh(ctx context.Context) error {
	if t.dirty {
		if err := t.Node.Restart(ctx, 30*time.Second); err != nil {
			return err
		}
	}
	t.dirty, t.read = false, false
	logs, err := t.Node.Logs(ctx)
	if err != nil {
		return fmt.Errorf("the node's log: %w", err)
	}
	t.mark = len(logs)
	return nil
}

// Control reads the node's health. Its error is only an interrupt;
// whatever is wrong with the node is Sick, for the caller to judge: after
// an input, a finding of the inputs before; on a fresh node, a node harp
// cannot use.
func (t *Target) Control(ctx context.Context) (Health, error) {
	tm := t.Timing.with()
	n := t.Node
	sick := func(f *Finding) (Health, error) {
		if ctx.Err() != nil {
			return Health{}, interrupted(ctx)
		}
		return Health{Sick: f}, nil
	}
	logs, _ := n.Logs(ctx)
	if f := fate(t.since(logs)); f != nil {
		return sick(f)
	}
	running, code, err := n.Running(ctx)
	switch {
	case err != nil:
		// Docker not answering is harp's; a node that stopped is seen
		// stopped (HAProxy's containers are never removed under it).
		return Health{}, fmt.Errorf("inspecting the node: %w", err)
	case !running:
		return sick(&Finding{Detector: "exit", What: fmt.Sprintf("the node stopped (its master exited with code %d)", code), Evidence: text.LastLines(t.since(logs), 60)})
	}
	if _, err := n.Addr(ctx, peerPort); err != nil {
		// Its port gone: it stopped in between (a finding), or Docker
		// failed (harp's).
		if running, code, rerr := n.Running(ctx); rerr == nil && !running {
			return sick(&Finding{Detector: "exit", What: fmt.Sprintf("the node stopped (its master exited with code %d; its peer port is gone)", code), Evidence: text.LastLines(t.since(logs), 60)})
		}
		return Health{}, fmt.Errorf("the running node's peer port: %w", err)
	}
	start, bound := time.Now(), tm.stuckBound(t.latency)
	info, err := t.info(ctx, bound)
	switch {
	case errors.Is(err, cli.ErrNotSent):
		return Health{}, fmt.Errorf("show info never reached the node's CLI: %w", err) // HAProxy never saw it
	case err != nil:
		return sick(&Finding{Detector: "cli", What: fmt.Sprintf("show info did not answer within %s (a control read): %v", bound, err), Evidence: text.LastLines(t.since(logs), 60)})
	}
	h := Health{Latency: time.Since(start)}
	t.latency = h.Latency
	if f := t.spin(ctx, info, 0, bound); f != nil {
		return sick(f)
	}
	if f := t.memory(info); f != nil {
		return sick(f)
	}
	if ctx.Err() != nil {
		return Health{}, interrupted(ctx)
	}
	return h, nil
}

// Run sends one input on a fresh connection to a node whose control was
// h, and asks every detector. A nil finding means nothing was seen; an
// error is harp's (the input could not be sent to a node that looked
// healthy) or the interrupt (ErrInterrupted), never a finding.
func (t *Target) Run(ctx context.Context, in Input, h Health) (*Finding, error) {
	n := t.Node
	logs, err := n.Logs(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, interrupted(ctx)
		}
		return nil, fmt.Errorf("the node's log: %w", err)
	}
	before := len(logs)
	t.dirty = true
	addr, sendErr := n.Addr(ctx, peerPort)
	if sendErr == nil {
		send := t.send
		if send == nil {
			send = t.sendPeer
		}
		sendErr = send(ctx, addr, in)
	}
	if ctx.Err() != nil {
		return nil, interrupted(ctx)
	}
	// A send that failed may be the node the input broke: the detectors say.
	f := t.detect(ctx, before, h, in.End)
	if ctx.Err() != nil {
		return nil, interrupted(ctx) // what was read while cancelling says nothing
	}
	if f == nil && sendErr != nil {
		return nil, sendErr
	}
	return f, nil
}

// sendPeer does the handshake as the remote peer, the steps, and the end.
// Every step checks for the interrupt, which also closes the connection (a
// write HAProxy does not take would block).
func (t *Target) sendPeer(ctx context.Context, addr string, in Input) error {
	tm := t.Timing.with()
	var d net.Dialer
	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	c, err := d.DialContext(dctx, "tcp", addr)
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("peer port %s: %w", addr, err)
	}
	tc := c.(*net.TCPConn)
	defer tc.Close()
	stop := context.AfterFunc(ctx, func() { tc.Close() })
	defer stop()
	failed := func(what string, err error) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("%s: %w", what, err)
	}
	tc.SetNoDelay(true)
	tc.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := tc.Write(peers.Hello{Remote: LocalPeer, Local: RemotePeer, PID: 4242}.Bytes()); err != nil {
		return failed("peers handshake", err)
	}
	br := bufio.NewReader(tc)
	line, err := br.ReadString('\n')
	if err != nil {
		return failed("peers handshake: no status line", err)
	}
	if st, _ := strconv.Atoi(strings.TrimSpace(line)); st != peers.StatusSuccess {
		return fmt.Errorf("peers handshake answered %q", strings.TrimSpace(line))
	}
	tc.SetDeadline(time.Time{})
	closed := make(chan struct{})
	go func() { io.Copy(io.Discard, br); close(closed) }() // HAProxy must never block on harp
	wait := func(d time.Duration, early <-chan struct{}) error {
		tmr := time.NewTimer(d)
		defer tmr.Stop()
		select {
		case <-tmr.C:
		case <-early:
		case <-ctx.Done():
			return ctx.Err()
		}
		return nil
	}
steps:
	for _, s := range in.Steps {
		for _, seg := range s.Segments() {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			tc.SetWriteDeadline(time.Now().Add(writeBound))
			if _, err := tc.Write(seg); err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				break steps // HAProxy closed on an error, or stopped reading: what it does next is the point
			}
			time.Sleep(segmentGap) // the gap is the fault: separate segments, not one write
		}
		if s.PauseMS > 0 {
			if err := wait(time.Duration(s.PauseMS)*time.Millisecond, nil); err != nil {
				return err
			}
		}
	}
	switch in.End {
	case EndReset:
		tc.SetLinger(0)
	case EndSilence:
		return wait(tm.Silence, closed)
	default:
		tc.CloseWrite()
		return wait(tm.FinWait, closed)
	}
	return ctx.Err()
}

// info is one show info, bounded.
func (t *Target) info(ctx context.Context, bound time.Duration) (cliout.Info, error) {
	cctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	return t.Node.Info(cctx, node.StatsSocket)
}

func (t *Target) since(logs string) string {
	if t.mark > len(logs) {
		return logs
	}
	return logs[t.mark:]
}

// fate is what the node's log says of its workers: an exit, a crash, the
// watchdog.
func fate(fresh string) *Finding {
	if ex := cliout.ParseWorkerExits(fresh); len(ex) > 0 {
		e := ex[0]
		f := &Finding{Detector: "exit", What: fmt.Sprintf("worker %d exited with code %d (%s)", e.PID, e.Code, e.Reason), Evidence: text.LastLines(fresh, 60)}
		if e.Code >= 128 {
			f.Detector = "crash"
		}
		return f
	}
	if ps := cliout.ParsePanics(fresh); len(ps) > 0 {
		return &Finding{Detector: "watchdog", What: "the watchdog killed the worker (" + ps[0].Line + ")", Evidence: text.LastLines(fresh, 60)}
	}
	if st := cliout.ParseStalls(fresh); len(st) > 0 {
		return &Finding{Detector: "watchdog", What: fmt.Sprintf("%d watchdog warnings (longest %d ms)", len(st), cliout.MaxStall(st)), Evidence: text.LastLines(fresh, 60)}
	}
	return nil
}

// detect asks every detector, the cheapest first. before is the length
// of the log before the input, h the control before it.
func (t *Target) detect(ctx context.Context, before int, h Health, end string) *Finding {
	tm := t.Timing.with()
	n := t.Node
	bound := tm.stuckBound(h.Latency)
	info, infoErr := t.info(ctx, bound)
	if ctx.Err() != nil {
		return nil // harp's own deadline or interrupt: never a finding
	}
	if infoErr != nil {
		// A stuck worker is killed by HAProxy's watchdog within seconds:
		// its fate, not only the silence, is the finding.
		node.Poll(ctx, tm.Fate, 200*time.Millisecond, func() (bool, error) {
			ex, err := n.Logs(ctx)
			return err == nil && len(cliout.ParseWorkerExits(sinceLen(ex, before))) > 0, nil
		})
	}
	logs, _ := n.Logs(ctx)
	defer func() { t.mark = max(t.mark, len(logs)) }()
	fresh := sinceLen(logs, before)
	if f := fate(fresh); f != nil {
		return f
	}
	if infoErr != nil {
		if running, code, err := n.Running(ctx); err == nil && !running {
			return &Finding{Detector: "exit", What: fmt.Sprintf("the node stopped (its master exited with code %d)", code), Evidence: text.LastLines(logs, 60)}
		}
		if _, err := n.Addr(ctx, peerPort); err != nil {
			return &Finding{Detector: "vanished", What: "the node's peer port is gone: " + err.Error(), Evidence: text.LastLines(fresh, 60)}
		}
		// The control before the input answered: a silence this long
		// (many times the control's time) is a stuck worker, not a slow machine.
		return &Finding{Detector: "cli", What: fmt.Sprintf("show info did not answer within %s (the control before the input answered in %s): %v",
			bound, h.Latency.Round(time.Millisecond), infoErr), Evidence: text.LastLines(fresh, 60)}
	}
	window := time.Duration(0)
	if end == EndSilence {
		window = tm.Window
	}
	if f := t.spin(ctx, info, window, bound); f != nil {
		return f
	}
	return t.memory(info)
}

func sinceLen(logs string, before int) string {
	if before > len(logs) {
		return logs
	}
	return logs[before:]
}

// spin says whether the worker is busy with nothing sent: Idle_pct low
// twice, a sampling interval apart; sampled on for window (after a silent
// end, the spin may start late).
func (t *Target) spin(ctx context.Context, first cliout.Info, window, bound time.Duration) *Finding {
	tm := t.Timing.with()
	low := func(i cliout.Info) (float64, bool) {
		idle, ok := num(i, "Idle_pct")
		return idle, ok && idle < spinIdlePct
	}
	prev, prevLow := low(first)
	until := time.Now().Add(window)
	for prevLow || time.Now().Before(until) {
		select {
		case <-time.After(tm.Sample): // the next reading must be an interval later
		case <-ctx.Done():
			return nil
		}
		again, err := t.info(ctx, bound)
		if err != nil {
			return nil // the next control or detector judges a silent CLI
		}
		idle, isLow := low(again)
		if prevLow && isLow {
			return &Finding{Detector: "spinning", What: fmt.Sprintf("the worker stays busy with nothing to do (Idle_pct %.0f, then %.0f)", prev, idle), Evidence: "show info:\n" + raw(again)}
		}
		if !isLow && !time.Now().Before(until) {
			return nil
		}
		prev, prevLow = idle, isLow
	}
	return nil
}

// memory compares the pools with the fresh node's first reading.
func (t *Target) memory(info cliout.Info) *Finding {
	used, ok := num(info, "PoolUsed_MB")
	if !ok {
		return nil
	}
	if !t.read {
		t.base, t.read = used, true
		return nil
	}
	if used > t.base+memoryGrow {
		return &Finding{Detector: "memory", What: fmt.Sprintf("pools grew from %.0f MB to %.0f MB", t.base, used), Evidence: "show info:\n" + raw(info)}
	}
	return nil
}

func num(i cliout.Info, key string) (float64, bool) {
	v, ok := i[key]
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	return f, err == nil
}

func raw(i cliout.Info) string {
	var b strings.Builder
	for _, k := range []string{"Idle_pct", "PoolAlloc_MB", "PoolUsed_MB", "Uptime", "CurrConns"} {
		if v, ok := i[k]; ok {
			fmt.Fprintf(&b, "%s: %s\n", k, v)
		}
	}
	return b.String()
}

package peerfuzz

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/harp-project/harp/harness/cliout"
	"github.com/harp-project/harp/harness/node"
	"github.com/harp-project/harp/harness/peers"
	"github.com/harp-project/harp/harness/text"
)

// Finding is what a detector saw after an input.
type Finding struct {
	// Detector: exit (a worker exited), crash (on a signal), watchdog (a
	// warning or panic), spinning (CPU while the input is idle), cli (the
	// CLI stopped answering), memory (pools keep growing).
	Detector string `json:"detector"`
	What     string `json:"what"`
	Evidence string `json:"evidence,omitempty"` // the node's log lines, show info
}

func (f Finding) String() string { return f.Detector + ": " + f.What }

// Same says whether two findings are the same failure for the minimizer:
// a worker that stopped serving (a crash, an exit, the watchdog, a silent
// CLI: one fault seen at different moments) is one; spinning and memory
// growth are each their own.
func Same(a, b *Finding) bool {
	if a == nil || b == nil {
		return false
	}
	group := func(d string) string {
		switch d {
		case "crash", "exit", "watchdog", "cli":
			return "stopped"
		}
		return d
	}
	return group(a.Detector) == group(b.Detector)
}

// Thresholds of the detectors.
const (
	spinIdlePct = 30 // show info Idle_pct below this, twice, while nothing is sent
	memoryGrow  = 64 // MB of pools used above the first reading
	segmentGap  = 2 * time.Millisecond
)

// Timing is how long the target waits for what; the zero value is the
// defaults (tests shorten them).
type Timing struct {
	CLI     time.Duration // one show info (3 s)
	Silence time.Duration // how long a silent end stays open (2 s)
	FinWait time.Duration // how long harp waits for HAProxy's close after its FIN (1 s)
	Sample  time.Duration // between two Idle_pct readings (1 s)
	Fate    time.Duration // how long a silent worker's exit is waited for (5 s)
}

func (t Timing) with() Timing {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&t.CLI, 3*time.Second)
	def(&t.Silence, 2*time.Second)
	def(&t.FinWait, time.Second)
	def(&t.Sample, time.Second)
	def(&t.Fate, 5*time.Second)
	return t
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
	base float64 // PoolUsed_MB at the first reading (-1: none yet)
	read bool
}

func exits(ctx context.Context, n Node) ([]cliout.WorkerExit, error) {
	logs, err := n.Logs(ctx)
	if err != nil {
		return nil, err
	}
	return cliout.ParseWorkerExits(logs), nil
}

// Run sends one input on a fresh connection and asks every detector. A
// nil finding means nothing was seen; an error is harp's (the node could
// not be reached before the input was sent).
func (t *Target) Run(ctx context.Context, in Input) (*Finding, error) {
	n := t.Node
	addr, err := n.Addr(ctx, fmt.Sprintf("%d/tcp", PeerPort))
	if err != nil {
		return nil, err
	}
	exitsBefore, logsBefore := 0, ""
	if ex, err := exits(ctx, n); err == nil {
		exitsBefore = len(ex)
	}
	logsBefore, _ = n.Logs(ctx)
	send := t.send
	if send == nil {
		send = t.sendPeer
	}
	if err := send(ctx, addr, in); err != nil {
		// A node that refuses the handshake may be one the last input
		// broke: the detectors say; otherwise it is harp's failure.
		if f := t.detect(ctx, exitsBefore, logsBefore); f != nil {
			return f, nil
		}
		return nil, err
	}
	return t.detect(ctx, exitsBefore, logsBefore), nil
}

// send does the handshake as the remote peer, the steps, and the end.
func (t *Target) sendPeer(ctx context.Context, addr string, in Input) error {
	var d net.Dialer
	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	c, err := d.DialContext(dctx, "tcp", addr)
	cancel()
	if err != nil {
		return fmt.Errorf("peer port %s: %w", addr, err)
	}
	tc := c.(*net.TCPConn)
	defer tc.Close()
	tc.SetNoDelay(true)
	tc.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := tc.Write(peers.Hello{Remote: LocalPeer, Local: RemotePeer, PID: 4242}.Bytes()); err != nil {
		return fmt.Errorf("peers handshake: %w", err)
	}
	br := bufio.NewReader(tc)
	line, err := br.ReadString('\n')
	if err != nil {
		return fmt.Errorf("peers handshake: no status line: %w", err)
	}
	if st, _ := strconv.Atoi(strings.TrimSpace(line)); st != peers.StatusSuccess {
		return fmt.Errorf("peers handshake answered %q", strings.TrimSpace(line))
	}
	tc.SetDeadline(time.Time{})
	closed := make(chan struct{})
	go func() { io.Copy(io.Discard, br); close(closed) }() // HAProxy must never block on harp
	for _, s := range in.Steps {
		for _, seg := range s.Segments() {
			if _, err := tc.Write(seg); err != nil {
				goto end // HAProxy closed on an error: what it does next is the point
			}
			time.Sleep(segmentGap) // the gap is the fault: separate segments, not one write
		}
		if s.PauseMS > 0 {
			select {
			case <-time.After(time.Duration(s.PauseMS) * time.Millisecond):
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
end:
	switch in.End {
	case EndReset:
		tc.SetLinger(0)
	case EndSilence:
		select {
		case <-closed:
		case <-time.After(t.Timing.with().Silence):
		case <-ctx.Done():
		}
	default:
		tc.CloseWrite()
		select {
		case <-closed:
		case <-time.After(t.Timing.with().FinWait):
		case <-ctx.Done():
		}
	}
	return nil
}

// detect asks every detector, the cheapest first.
func (t *Target) detect(ctx context.Context, exitsBefore int, logsBefore string) *Finding {
	n := t.Node
	cctx, cancel := context.WithTimeout(ctx, t.Timing.with().CLI)
	info, infoErr := n.Info(cctx, node.StatsSocket)
	cancel()
	if infoErr != nil {
		// A stuck worker is killed by HAProxy's watchdog within seconds:
		// its fate, not only the silence, is the finding.
		node.Poll(ctx, t.Timing.with().Fate, 200*time.Millisecond, func() (bool, error) {
			ex, err := exits(ctx, n)
			return err == nil && len(ex) > exitsBefore, nil
		})
	}
	logs, _ := n.Logs(ctx)
	fresh := strings.TrimPrefix(logs, logsBefore)
	if ex, err := exits(ctx, n); err == nil && len(ex) > exitsBefore {
		e := ex[exitsBefore]
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
	if infoErr != nil {
		if running, _, err := n.Running(ctx); err == nil && !running {
			return &Finding{Detector: "exit", What: "the node stopped (its master exited)", Evidence: text.LastLines(logs, 60)}
		}
		// Slow, or stuck? A second ask on a fresh connection tells: a
		// loaded machine answers it, a stuck worker does not.
		cctx, cancel := context.WithTimeout(ctx, t.Timing.with().CLI)
		again, err := n.Info(cctx, node.StatsSocket)
		cancel()
		if err != nil {
			return &Finding{Detector: "cli", What: "show info did not answer within " + t.Timing.with().CLI.String() + ", twice: " + infoErr.Error(), Evidence: text.LastLines(fresh, 60)}
		}
		info = again
	}
	// Spinning: the input is over, nothing is sent; an idle worker's loop
	// is mostly idle. Twice, a second apart, to pass a busy moment.
	if idle, ok := num(info, "Idle_pct"); ok && idle < spinIdlePct {
		time.Sleep(t.Timing.with().Sample) // a sampling interval: the second reading must be a second later
		if again, err := n.Info(ctx, node.StatsSocket); err == nil {
			if idle2, ok := num(again, "Idle_pct"); ok && idle2 < spinIdlePct {
				return &Finding{Detector: "spinning", What: fmt.Sprintf("the worker stays busy with nothing to do (Idle_pct %.0f, then %.0f)", idle, idle2), Evidence: "show info:\n" + raw(again)}
			}
		}
	}
	if used, ok := num(info, "PoolUsed_MB"); ok {
		if !t.read {
			t.base, t.read = used, true
		} else if used > t.base+memoryGrow {
			return &Finding{Detector: "memory", What: fmt.Sprintf("pools grew from %.0f MB to %.0f MB", t.base, used), Evidence: "show info:\n" + raw(info)}
		}
	}
	return nil
}

// Reset makes the node ready for the next input: a node a finding
// stopped (its master exits with the worker) is restarted.
func (t *Target) Reset(ctx context.Context) error {
	running, _, err := t.Node.Running(ctx)
	if err != nil {
		return err
	}
	if !running {
		t.read = false
		return t.Node.Restart(ctx, 30*time.Second)
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

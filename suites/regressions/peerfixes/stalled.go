package peerfixes

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/harp-project/harp/harness/core/cliout"
	"github.com/harp-project/harp/harness/live/fixrun"
	"github.com/harp-project/harp/harness/live/node"
	"github.com/harp-project/harp/harness/live/peers"
)

// Stalled updates: enough entries of 64-byte keys to fill harp's 4 KB
// receive buffer, the node's 4 KB send buffer and its own 16 KB one many
// times over.
const (
	stalledEntries = 3000
	// stalledFor: past the 5 s reconnect timer the bug leaves expired.
	stalledFor = 8 * time.Second
	// trickle: what harp reads every 200 ms, far less than HAProxy pushes.
	trickle = 256
)

// stalledReader completes a session as remote on a connection that then
// reads nothing, fills the table, and measures the worker's loop rate
// once the updates have waited past the reconnect timer.
func stalledReader(ctx context.Context, n *node.Node) (string, error) {
	addr, err := n.Addr(ctx, fixrun.Port("p"))
	if err != nil {
		return "", err
	}
	conn, err := sessionAsRemote(ctx, addr, 4096)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	// From here harp sends nothing, so no message of its refreshes
	// HAProxy's timers, and reads a trickle: what HAProxy pushes piles up,
	// yet its writes go on, so its client timeout never ends the session.
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		buf := make([]byte, trickle)
		for {
			select {
			case <-stop:
				return
			case <-time.After(200 * time.Millisecond):
			}
			_ = conn.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
			if _, err := conn.Read(buf); err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
				return
			}
		}
	}()
	for i := 0; i < stalledEntries; i += 50 {
		var cmds []string
		for k := i; k < min(i+50, stalledEntries); k++ {
			cmds = append(cmds, fmt.Sprintf("set table t key harp-stalled-update-%045d data.gpc0 1", k))
		}
		if err := fixrun.Setup(ctx, n, strings.Join(cmds, ";")+"\n"); err != nil {
			return "", err
		}
	}
	var remote cliout.Peer
	var stuck time.Time
	err = node.Poll(ctx, 5*time.Second, 100*time.Millisecond, func() (bool, error) {
		s, err := n.Section(ctx, node.Current, "p")
		if err != nil {
			return false, err
		}
		r, ok := s.Peer("remote")
		if !ok || len(r.Tables) == 0 {
			return false, fmt.Errorf("show peers lists no table under peer remote")
		}
		remote = r
		return r.Established() && r.Tables[0].LastPushed < r.Tables[0].LocalUpdate, nil
	})
	if err != nil {
		return "", fmt.Errorf("the updates never waited on the stalled session (established %v, tables %+v): %w", remote.Established(), remote.Tables, err)
	}
	stuck = time.Now()
	// Windows of half a second while the session is up and updates wait,
	// until it ends (a correct build may time a silent peer out) or
	// stalledFor passes: the bug spins once the reconnect timer expires.
	var most int64
	windows := 0
	for time.Since(stuck) < stalledFor {
		rate, err := n.LoopsPerSecond(ctx, node.StatsSocket, 500*time.Millisecond)
		if err != nil {
			return "", err
		}
		s, err := n.Section(ctx, node.Current, "p")
		if err != nil {
			return "", err
		}
		r, _ := s.Peer("remote")
		if !r.Established() || len(r.Tables) == 0 || r.Tables[0].LastPushed >= r.Tables[0].LocalUpdate {
			break
		}
		windows++
		most = max(most, rate)
	}
	if windows == 0 {
		return "", fmt.Errorf("the session ended or its updates went out before a window was measured: nothing was waiting")
	}
	return fmt.Sprintf("most loops per second while updates waited on a stalled session: %d (%d windows of 500ms, %s)", most, windows, time.Since(stuck).Round(100*time.Millisecond)), nil
}

// sessionAsRemote connects to the node's peers bind as its remote peer
// "remote" (rcvbuf, when not 0, the connection's receive buffer) and
// completes the handshake: HAProxy's 200.
func sessionAsRemote(ctx context.Context, addr string, rcvbuf int) (net.Conn, error) {
	d := net.Dialer{Timeout: 2 * time.Second}
	if rcvbuf > 0 {
		d.Control = func(_, _ string, c syscall.RawConn) error {
			var serr error
			err := c.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, rcvbuf) })
			if err != nil {
				return err
			}
			return serr
		}
	}
	var conn net.Conn
	err := node.Poll(ctx, 5*time.Second, 200*time.Millisecond, func() (bool, error) {
		c, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			return false, nil
		}
		_ = c.SetDeadline(time.Now().Add(2 * time.Second))
		hello := peers.Hello{Remote: "harp", Local: "remote", PID: os.Getpid()}
		if _, err := c.Write(hello.Bytes()); err != nil {
			c.Close()
			return false, nil
		}
		line, err := bufio.NewReader(c).ReadString('\n')
		if err != nil || strings.TrimSpace(line) != "200" {
			c.Close()
			return false, nil
		}
		_ = c.SetDeadline(time.Time{})
		conn = c
		return true, nil
	})
	if err != nil {
		return nil, fmt.Errorf("no session accepted as remote: %w", err)
	}
	return conn, nil
}

// dialAs opens harp's peers session to the node's bind as its remote
// peer name, retried for 5 s while the node's peers bind comes up.
func dialAs(ctx context.Context, addr, name string, o peers.Options) (*peers.Conn, error) {
	var conn *peers.Conn
	if err := node.Poll(ctx, 5*time.Second, 200*time.Millisecond, func() (bool, error) {
		c, status, err := peers.Dial(ctx, addr, peers.Hello{Remote: "harp", Local: name, PID: os.Getpid()}, o)
		conn = c
		return err == nil && status == peers.StatusSuccess, nil
	}); err != nil {
		return nil, fmt.Errorf("no session accepted as %s: %w", name, err)
	}
	return conn, nil
}

package upstreamfixes

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/harp-project/harp/harness/node"
	"github.com/harp-project/harp/harness/peers"
	"github.com/harp-project/harp/harness/remotepeer"
	"github.com/harp-project/harp/suites/regressions/upstreamfixes/judge"
)

// How a case reaches HAProxy, and how harp tells no answer from a dead worker.

// do runs one case and gives HAProxy's answer, or why harp could not.
func do(ctx context.Context, n *node.Node, c Case) (answer, harpErr string) {
	reach := map[Kind]func(context.Context, *node.Node, Case) (string, error){
		Stats: stats, Master: master, Check: check, Exec: execute, Connect: connect,
		HTTP: request, Peer: halfClosedPeer, PeerSession: peerSession,
		Steps: func(ctx context.Context, n *node.Node, c Case) (string, error) { return c.Drive(ctx, n) },
	}[c.Kind]
	if reach == nil {
		return "", fmt.Sprintf("case %s: no kind %q", c.ID, c.Kind)
	}
	answer, err := reach(ctx, n, c)
	if err != nil {
		return answer, err.Error()
	}
	if c.Then != "" {
		// The state after, polled until the case's expectation holds (an
		// aborted connection takes a moment to go) or answerWait passed (a
		// loaded machine is slow to reap).
		var then string
		var err error
		node.Poll(ctx, answerWait, 100*time.Millisecond, func() (bool, error) {
			then, err = n.Stats(ctx, c.Then)
			ok, _ := c.Want(answer + "\n--- then\n" + then)
			return err == nil && ok, nil
		})
		if err != nil {
			return answer, "reading the state after: " + err.Error()
		}
		answer += "\n--- then\n" + then
	}
	return answer, ""
}

// stats sends Send on a stats socket, Times connections one after another.
func stats(ctx context.Context, n *node.Node, c Case) (answer string, err error) {
	port := cmp.Or(c.Port, node.StatsPort)
	addr, err := n.Addr(ctx, port)
	if c.Direct {
		addr, err = n.DirectAddr(ctx, port)
	}
	if err != nil {
		return "", err
	}
	for range max(c.Times, 1) {
		answer, err = rawAt(addr, port, c.Send, !c.KeepOpen, c.Abort)
		if c.Silent && errors.Is(err, errNoAnswer) {
			answer, err = "", nil // judged only if the worker answers right after (run)
		}
		if err != nil {
			break
		}
	}
	return answer, err
}

func master(ctx context.Context, n *node.Node, c Case) (string, error) {
	return raw(ctx, n, node.MasterPort, c.Send, true, c.Abort)
}

// check runs haproxy -c on the case's config, after the control.
func check(ctx context.Context, n *node.Node, c Case) (string, error) {
	if err := control(ctx, n); err != nil {
		return "", err
	}
	path := "/etc/harp/check-" + c.ID + ".cfg"
	if err := n.WriteFile(ctx, path, []byte(CheckConfig(c))); err != nil {
		return "", fmt.Errorf("writing the config: %w", err)
	}
	ok, out, err := n.CheckConfig(ctx, path)
	if err != nil {
		return "", err
	}
	if ok {
		return "exit 0\n" + out, nil
	}
	return "refused\n" + out, nil
}

// execute runs the build's binary with the case's arguments ({cfg}: its
// config, written after the control).
func execute(ctx context.Context, n *node.Node, c Case) (string, error) {
	args := c.Args
	if c.Config != "" {
		if err := control(ctx, n); err != nil {
			return "", err
		}
		path := "/etc/harp/exec-" + c.ID + ".cfg"
		if err := n.WriteFile(ctx, path, []byte(c.Config)); err != nil {
			return "", fmt.Errorf("writing the config: %w", err)
		}
		args = nil
		for _, a := range c.Args {
			args = append(args, strings.ReplaceAll(a, "{cfg}", path))
		}
	}
	rctx, cancel := context.WithTimeout(ctx, answerWait)
	defer cancel()
	code, out, err := n.RunBinary(rctx, args...)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("exit %d\n%s", code, out), nil
}

// connect opens one TCP connection to 8081 and sends a byte.
func connect(ctx context.Context, n *node.Node, _ Case) (string, error) {
	addr, err := n.Addr(ctx, "8081/tcp")
	if err != nil {
		return "", err
	}
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return "", fmt.Errorf("connecting: %w", err)
	}
	conn.Write([]byte("x"))
	conn.SetReadDeadline(time.Now().Add(time.Second))
	conn.Read(make([]byte, 16)) // whatever comes, or the deadline
	conn.Close()
	return "connected", nil
}

// request sends Send on the stats socket, then a request to 8082: its x-g
// header is the answer.
func request(ctx context.Context, n *node.Node, c Case) (string, error) {
	if _, err := raw(ctx, n, node.StatsPort, c.Send, true, false); err != nil {
		return "", err
	}
	addr, err := n.Addr(ctx, "8082/tcp")
	if err != nil {
		return "", err
	}
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(rctx, http.MethodGet, "http://"+addr+"/", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("the request: %w", err)
	}
	resp.Body.Close()
	return "x-g: " + resp.Header.Get("x-g"), nil
}

// get sends one GET for path to the node's port: the status.
func get(ctx context.Context, n *node.Node, port, path string) (int, error) {
	addr, err := n.Addr(ctx, port)
	if err != nil {
		return 0, err
	}
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodGet, "http://"+addr+path, nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// halfClosedPeer connects to the peers bind, sends nothing and half-closes.
func halfClosedPeer(ctx context.Context, n *node.Node, _ Case) (string, error) {
	conn, err := dialPeers(ctx, n)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	conn.CloseWrite()
	conn.SetReadDeadline(time.Now().Add(answerWait))
	if _, err := io.Copy(io.Discard, conn); err != nil {
		return "still open after " + answerWait.String(), nil
	}
	return "closed by haproxy", nil
}

// peerSession completes a handshake as remote and runs the case's Session. The session must be
// harp's alone: it starts once no attempt of HAProxy's own to reach remote
// is in progress, and one that collided with such an attempt anyway (coll
// up in show peers) is run again, at most collisionTries times: a
// superseded attempt's release clears the alive flag (#3519), which would
// end the session for a reason not the case's.
func peerSession(ctx context.Context, n *node.Node, c Case) (string, error) {
	addr, err := n.Addr(ctx, sessionPort)
	if err != nil {
		return "", err
	}
	p := &remotepeer.Probe{Node: n, Addr: addr, Section: "p2", Local: "harp", Remote: "remote"}
	var why string
	for try := 1; try <= collisionTries; try++ {
		answer, coll, err := peerSessionOnce(ctx, n, p, c)
		if err != nil || coll == "" {
			return answer, err
		}
		why = coll
	}
	return "", fmt.Errorf("every try collided with HAProxy's own attempt to connect to remote: %s", why)
}

const collisionTries = 3

func peerSessionOnce(ctx context.Context, n *node.Node, p *remotepeer.Probe, c Case) (answer, collided string, err error) {
	if _, err := p.Settled(ctx, 0, 15*time.Second, false); err != nil {
		return "", "", fmt.Errorf("HAProxy's own attempt to connect to remote never ended: %w", err)
	}
	before, err := p.State(ctx)
	if err != nil {
		return "", "", err
	}
	c0, err := net.DialTimeout("tcp", p.Addr, 5*time.Second)
	if err != nil {
		return "", "", fmt.Errorf("connecting: %w", err)
	}
	conn := c0.(*net.TCPConn)
	defer conn.Close()
	pc, status, err := peers.Handshake(ctx, conn, peers.Hello{Remote: p.Local, Local: p.Remote, PID: os.Getpid()}, peers.Options{})
	if err != nil {
		return "", "", err
	}
	if status != peers.StatusSuccess {
		return "", "", fmt.Errorf("the handshake as remote was answered %d", status)
	}
	defer pc.Close()
	answer, err = c.Session(ctx, PeerRun{C: pc, TCP: conn})
	if err != nil {
		return answer, "", err
	}
	after, err := p.State(ctx)
	if err != nil {
		// Unknown, never "no collision"; a node the session killed is
		// run's to judge, from the master's log.
		return answer, "", fmt.Errorf("show peers after the session: %w", err)
	}
	if after.Int("coll") != before.Int("coll") {
		return answer, fmt.Sprintf("coll %d -> %d", before.Int("coll"), after.Int("coll")), nil
	}
	return answer, "", nil
}

// dial connects to one of the node's ports.
func dial(ctx context.Context, n *node.Node, port string) (net.Conn, error) {
	addr, err := n.Addr(ctx, port)
	if err != nil {
		return nil, err
	}
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", port, err)
	}
	return conn, nil
}

// dialPeers connects to the node's peers bind.
func dialPeers(ctx context.Context, n *node.Node) (*net.TCPConn, error) {
	addr, err := n.Addr(ctx, "10000/tcp")
	if err != nil {
		return nil, err
	}
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, fmt.Errorf("connecting: %w", err)
	}
	return conn.(*net.TCPConn), nil
}

// sessionPort is the bind of section p2, which has the remote peer harp's
// sessions play (p, on 10000, has none: a remote peer changes how HAProxy
// treats a connection that never says hello).
const sessionPort = "10001/tcp"

// userPort is the stats socket at level user.
const userPort = "9997/tcp"

// control: the config without any case's lines loads on this build, so a
// refusal is the case's, not harp's config or a binary harp cannot run.
func control(ctx context.Context, n *node.Node) error {
	path := "/etc/harp/control.cfg"
	if err := n.WriteFile(ctx, path, []byte(CheckConfig(Case{}))); err != nil {
		return fmt.Errorf("writing the control config: %w", err)
	}
	if ok, out, err := n.CheckConfig(ctx, path); err != nil || !ok {
		return fmt.Errorf("the control config (without the case's lines) does not load: %v %s", err, judge.OneLine(out))
	}
	return nil
}

// raw sends exactly payload on a fresh connection to port and reads until
// HAProxy closes it (at most 5s). An empty payload is a connection closed
// at once.
func raw(ctx context.Context, n *node.Node, port, payload string, closeWrite, abort bool) (string, error) {
	addr, err := n.Addr(ctx, port)
	if err != nil {
		return "", err
	}
	return rawAt(addr, port, payload, closeWrite, abort)
}

// rawAt is raw on an address already resolved.
func rawAt(addr, port, payload string, closeWrite, abort bool) (string, error) {
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return "", fmt.Errorf("connecting to %s: %w", port, err)
	}
	defer conn.Close()
	if payload == "" {
		return "", nil
	}
	conn.SetDeadline(time.Now().Add(answerWait))
	first, rest, paused := strings.Cut(payload, "\x00")
	if _, err := conn.Write([]byte(first)); err != nil {
		return "", fmt.Errorf("sending to %s: %w", port, err)
	}
	if paused {
		// The client's pause is the trigger, not a wait for an outcome.
		time.Sleep(600 * time.Millisecond)
		if _, err := conn.Write([]byte(rest)); err != nil {
			return "", fmt.Errorf("sending to %s: %w", port, err)
		}
	}
	if cw, ok := conn.(*net.TCPConn); ok && closeWrite {
		cw.CloseWrite()
	}
	if abort {
		return "", nil // closed by the defer, unread
	}
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		k, err := conn.Read(buf)
		b.Write(buf[:k])
		if err == nil {
			continue
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() && b.Len() == 0 {
			// Nothing at all by harp's deadline is no answer (a loaded
			// machine is slow), never an empty one. An answer HAProxy sent
			// without closing (the master CLI after an error) is kept.
			return "", fmt.Errorf("no answer on %s within %s: %w", port, answerWait, errNoAnswer)
		}
		break // closed by HAProxy (or reset): what came is the answer
	}
	return b.String(), nil
}

var errNoAnswer = errors.New("silence")

// answerWait bounds one exchange; a slower one is harp's failure to
// observe, never HAProxy's answer.
const answerWait = 10 * time.Second

// exitedSince polls the master's log (up to 10s: it logs a worker's exit
// once it has reaped it) for a worker exit after the first had ones.
func exitedSince(ctx context.Context, n *node.Node, had int) bool {
	died := false
	node.Poll(ctx, 10*time.Second, 200*time.Millisecond, func() (bool, error) {
		es, err := n.Exits(ctx)
		if err != nil || len(es) <= had {
			return false, nil
		}
		for _, e := range es[had:] {
			// The serving worker, or any that died on a signal (an old
			// worker leaving after its last client is no death).
			died = died || e.Current || e.Code > 128
		}
		return died, nil
	})
	return died
}

// alive says whether the worker answers show info within 10s.
func alive(ctx context.Context, n *node.Node) bool {
	ok := false
	node.Poll(ctx, 10*time.Second, 100*time.Millisecond, func() (bool, error) {
		out, err := n.Stats(ctx, "show info")
		ok = err == nil && strings.Contains(out, "Pid:")
		return ok, nil
	})
	return ok
}

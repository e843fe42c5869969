package fixrun

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/harp-project/harp/harness/cli"
	"github.com/harp-project/harp/harness/config"
	"github.com/harp-project/harp/harness/fixcase"
	"github.com/harp-project/harp/harness/node"
	"github.com/harp-project/harp/harness/peers"
	"github.com/harp-project/harp/harness/remotepeer"
)

// How a case reaches HAProxy, by its kind.

// Case is what reaching HAProxy needs of a case: its file.
type Case = fixcase.Case

// do runs one case and gives HAProxy's answer, or why harp could not.
func (a Area) do(ctx context.Context, n *node.Node, c fixcase.Judged) (answer, harpErr string) {
	reach := map[fixcase.Kind]func(context.Context, *node.Node, Case) (string, error){
		fixcase.Stats: stats, fixcase.Master: master, fixcase.Check: check, fixcase.Exec: execute,
		fixcase.Connect: connect, fixcase.HTTP: request, fixcase.Peer: halfClosedPeer,
		fixcase.PeerSession: func(ctx context.Context, n *node.Node, c Case) (string, error) {
			return peerSession(ctx, n, a.Sessions[c.ID])
		},
		fixcase.Steps: func(ctx context.Context, n *node.Node, c Case) (string, error) { return a.Drives[c.ID](ctx, n) },
	}[c.Kind]
	if reach == nil {
		return "", fmt.Sprintf("case %s: no kind %q", c.ID, c.Kind)
	}
	answer, err := reach(ctx, n, c.Case)
	if err != nil {
		return answer, err.Error()
	}
	if c.Then != "" {
		// The state after, polled until the case's expectation holds (an
		// aborted connection takes a moment to go) or AnswerWait passed (a
		// loaded machine is slow to reap).
		var then string
		var err error
		node.Poll(ctx, AnswerWait, 100*time.Millisecond, func() (bool, error) {
			then, err = n.Stats(ctx, c.Then)
			ok, _ := c.Want(answer + fixcase.ThenMark + then)
			return err == nil && ok, nil
		})
		if err != nil {
			return answer, "reading the state after: " + err.Error()
		}
		answer += fixcase.ThenMark + then
	}
	return answer, ""
}

// stats sends Send on a stats socket, Times connections one after another,
// Apart apart ({try} in Send: the connection's number, from 1), the last
// one's answer after "<Times> connections" when more than one.
func stats(ctx context.Context, n *node.Node, c Case) (answer string, err error) {
	port := cmp.Or(c.Port, node.StatsPort)
	addr, err := n.Addr(ctx, port)
	if c.Direct {
		addr, err = n.DirectAddr(ctx, port)
	}
	if err != nil {
		return "", err
	}
	for try := range max(c.Times, 1) {
		if try > 0 && c.Apart > 0 {
			select { // the trigger's pace, not a wait for an outcome
			case <-time.After(c.Apart):
			case <-ctx.Done():
				return "", ctx.Err()
			}
		}
		send := strings.ReplaceAll(c.Send, "{try}", strconv.Itoa(try+1))
		answer, err = cli.Raw(ctx, addr, send, cli.RawOptions{Name: port, KeepOpen: c.KeepOpen, Abort: c.Abort, Wait: AnswerWait})
		if c.Silent && errors.Is(err, cli.ErrNoAnswer) {
			answer, err = "", nil // judged only if the worker answers right after (run)
		}
		if err != nil {
			break
		}
	}
	if c.Times > 1 && err == nil {
		answer = fmt.Sprintf("%d connections\n", c.Times) + answer // a judge counts them
	}
	return answer, err
}

func master(ctx context.Context, n *node.Node, c Case) (string, error) {
	return n.Raw(ctx, node.MasterPort, c.Send, cli.RawOptions{Abort: c.Abort, Wait: AnswerWait})
}

// check runs haproxy -c on the case's config, after the control.
func check(ctx context.Context, n *node.Node, c Case) (string, error) {
	if err := control(ctx, n); err != nil {
		return "", err
	}
	cfg, err := checkConfig(c)
	if err != nil {
		return "", err
	}
	path := "/etc/harp/check-" + c.ID + ".cfg"
	if err := n.WriteFile(ctx, path, []byte(cfg)); err != nil {
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
	rctx, cancel := context.WithTimeout(ctx, AnswerWait)
	defer cancel()
	code, out, err := n.RunBinary(rctx, args...)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("exit %d\n%s", code, out), nil
}

// connect opens one TCP connection to 8081 and sends a byte.
func connect(ctx context.Context, n *node.Node, _ Case) (string, error) {
	if err := n.Poke(ctx, "8081/tcp", "x", time.Second); err != nil {
		return "", err
	}
	return "connected", nil
}

// request sends Send on the stats socket, then a request to 8082: its x-g
// header is the answer.
func request(ctx context.Context, n *node.Node, c Case) (string, error) {
	if _, err := n.Raw(ctx, node.StatsPort, c.Send, cli.RawOptions{Wait: AnswerWait}); err != nil {
		return "", err
	}
	resp, err := n.Get(ctx, "8082/tcp", "/", 5*time.Second)
	if err != nil {
		return "", fmt.Errorf("the request: %w", err)
	}
	return "x-g: " + resp.Header.Get("x-g"), nil
}

// halfClosedPeer connects to the peers bind, sends nothing and half-closes.
func halfClosedPeer(ctx context.Context, n *node.Node, _ Case) (string, error) {
	closed, err := n.HalfClosed(ctx, "10000/tcp", AnswerWait)
	switch {
	case err != nil:
		return "", err
	case !closed:
		return "still open after " + AnswerWait.String(), nil
	}
	return "closed by haproxy", nil
}

// peerSession completes a handshake as remote and runs the case's Session
// on a session that is harp's alone (remotepeer's Session): one that
// collided with HAProxy's own attempt to reach remote is run again, at
// most collisionTries times.
func peerSession(ctx context.Context, n *node.Node, run Session) (string, error) {
	addr, err := n.Addr(ctx, sessionPort)
	if err != nil {
		return "", err
	}
	p := &remotepeer.Probe{Node: n, Addr: addr, Section: "p2", Local: "harp", Remote: "remote"}
	return p.Session(ctx, peers.Options{}, collisionTries, func(pc *peers.Conn, tcp *net.TCPConn) (string, error) {
		return run(ctx, pc, tcp)
	})
}

const collisionTries = 3

// sessionPort is the bind of section p2, which has the remote peer harp's
// sessions play (p, on 10000, has none: a remote peer changes how HAProxy
// treats a connection that never says hello).
const sessionPort = "10001/tcp"

// userPort is the stats socket at level user.
const userPort = "9997/tcp"

// control: the config without any case's lines loads on this build, so a
// refusal is the case's, not harp's config or a binary harp cannot run.
func control(ctx context.Context, n *node.Node) error {
	cfg, err := checkConfig(Case{})
	if err != nil {
		return err
	}
	path := "/etc/harp/control.cfg"
	if err := n.WriteFile(ctx, path, []byte(cfg)); err != nil {
		return fmt.Errorf("writing the control config: %w", err)
	}
	if ok, out, err := n.CheckConfig(ctx, path); err != nil || !ok {
		return fmt.Errorf("the control config (without the case's lines) does not load: %v %s", err, OneLine(out))
	}
	return nil
}

// checkConfig is a Check case's whole config (the control's, for a case
// of no lines).
func checkConfig(c Case) (string, error) {
	return config.Render("upstream-fixes-check.cfg.tmpl", map[string]string{"Global": c.Global, "Frontend": c.Frontend, "Extra": c.Extra})
}

// AnswerWait bounds one exchange; a slower one is harp's failure to
// observe, never HAProxy's answer.
const AnswerWait = 10 * time.Second

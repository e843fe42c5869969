package fixrun

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/harp-project/harp/harness/core/fixcase"
	"github.com/harp-project/harp/harness/core/obs"
	"github.com/harp-project/harp/harness/core/text"
	"github.com/harp-project/harp/harness/live/cli"
	"github.com/harp-project/harp/harness/live/node"
	"github.com/harp-project/harp/harness/live/peers"
	"github.com/harp-project/harp/harness/live/remotepeer"
	"github.com/harp-project/harp/images"
)

// How a case reaches HAProxy, by its kind.

// Case is what reaching HAProxy needs of a case: its file.
type Case = fixcase.Case

// do runs one case: HAProxy's answer, or harp's failure to get it
// (unknown, never an answer), or why the case is not applicable to the
// build after all (a drive's NotApplicable).
func (a Area) do(ctx context.Context, n *node.Node, c fixcase.Judged) (obs.Of[string], string) {
	reach := map[fixcase.Kind]func(context.Context, *node.Node, Case) (string, error){
		fixcase.Stats: stats, fixcase.Master: master, fixcase.Check: check, fixcase.Exec: execute,
		fixcase.Connect: connect, fixcase.HTTP: request, fixcase.Peer: halfClosedPeer,
		fixcase.PeerSession: func(ctx context.Context, n *node.Node, c Case) (string, error) {
			return peerSession(ctx, n, c, a.Sessions[c.ID])
		},
		fixcase.Steps: func(ctx context.Context, n *node.Node, c Case) (string, error) { return a.Drives[c.ID](ctx, n) },
	}[c.Kind]
	if reach == nil {
		return obs.Failure[string]("case %s: no kind %q", c.ID, c.Kind), ""
	}
	answer, err := reach(ctx, n, c.Case)
	var na NotApplicable
	if errors.As(err, &na) {
		return obs.Of[string]{}, string(na)
	}
	if err != nil {
		return obs.Failure[string]("%v", err), ""
	}
	if c.Then != "" {
		// The state after, polled until the case's expectation holds (an
		// aborted connection takes a moment to go) or AnswerWait passed (a
		// loaded machine is slow to reap).
		var then string
		var err error
		settle, settles := a.Settles[c.ID]
		node.Poll(ctx, AnswerWait, 100*time.Millisecond, func() (bool, error) {
			// Asked before the read: a reading begun once the state was
			// final is final.
			final := false
			if settles {
				final, _ = settle.Final(ctx, n) // a failed reading settles nothing
			}
			then, err = n.Stats(ctx, c.Then)
			ok, _, _ := c.Want(answer + fixcase.ThenMark + then)
			// A final state decides on its first read (ThenFinal).
			return err == nil && (ok || c.ThenFinal || final), nil
		})
		if err != nil {
			return obs.Failure[string]("reading the state after (%s): %v", c.Then, err), ""
		}
		answer += fixcase.ThenMark + then
	}
	return obs.Value(answer), ""
}

// NotApplicable is a drive's word that the build cannot show what its
// case looks at, found only by running it (a build that leaves the
// open-files limit as it finds it says nothing of the maxconn it runs
// with): the case is not applicable there, never held and never failed.
type NotApplicable string

func (n NotApplicable) Error() string { return string(n) }

// stats sends Send on a stats socket, Times connections one after another,
// Apart apart ({try} in Send: the connection's number, from 1), the last
// one's answer after "<Times> connections" when more than one.
func stats(ctx context.Context, n *node.Node, c Case) (answer string, err error) {
	port := cmp.Or(c.Port, node.StatsPort)
	for try := range max(c.Times, 1) {
		if try > 0 && c.Apart > 0 {
			select { // the trigger's pace, not a wait for an outcome
			case <-time.After(c.Apart):
			case <-ctx.Done():
				return "", ctx.Err()
			}
		}
		send := strings.ReplaceAll(c.Send, "{try}", strconv.Itoa(try+1))
		control := func(ctx context.Context) error { _, err := n.Stats(ctx, "show info"); return err }
		if answer, err = exchange(ctx, n, port, send, c, control); err != nil {
			break
		}
	}
	if c.Times > 1 && err == nil {
		answer = fmt.Sprintf("%d connections\n", c.Times) + answer // a judge counts them
	}
	return answer, err
}

// exchange sends a case's bytes on one of the node's sockets, on the
// node's own address (no proxy between: a close is HAProxy's), with a
// control exchange beside it, and gives HAProxy's whole answer: what came
// before it closed, or before it went quiet while it answered the
// control (the master CLI leaves the connection open after an error).
// No byte is an answer only for a case that says so (Silent). Anything
// else is harp's failure.
func exchange(ctx context.Context, n *node.Node, port, send string, c Case, control func(context.Context) error) (string, error) {
	r, err := raw(ctx, n, port, send, c, control)
	return Answer(r, err, c.Silent)
}

// raw is the case's bytes on the node's own address, with control beside.
func raw(ctx context.Context, n *node.Node, port, send string, c Case, control func(context.Context) error) (cli.Reply, error) {
	return n.Raw(ctx, port, send, cli.RawOptions{KeepOpen: c.KeepOpen, Abort: c.Abort, Wait: AnswerWait, Control: control})
}

// Answer is what a raw exchange says as a case's answer: the text
// HAProxy sent before closing or going quiet (Reply.Quiet); no byte only
// for a Silent case; nothing for an abort, whose case judges what
// followed. An error is harp's: the exchange's own, an answer cut by
// harp's deadline, or no byte where the case expects words (no answer,
// never an empty one).
func Answer(r cli.Reply, err error, silent bool) (string, error) {
	switch {
	case err != nil:
		return "", err
	case r.Aborted:
		return "", nil
	case !r.Closed && !r.Quiet:
		return "", fmt.Errorf("no whole answer (%+v)", r)
	case r.Text != "" || silent:
		return r.Text, nil
	case r.Closed:
		return "", errors.New("HAProxy closed the connection without a byte: no answer to judge (the case expects words)")
	}
	return "", errors.New("HAProxy sent no byte while it answered the control: no answer to judge (the case expects words)")
}

func master(ctx context.Context, n *node.Node, c Case) (string, error) {
	control := func(ctx context.Context) error { _, err := n.Master(ctx, "show proc"); return err }
	r, err := raw(ctx, n, node.MasterPort, c.Send, c, control)
	if err == nil && r.Quiet && r.Text == "" {
		// The master answers show proc itself but relays a worker's answer
		// when it comes: its quiet proves nothing of a command it
		// forwarded to a worker that a loaded machine slows. Only its
		// close says it had nothing to say.
		return "", errors.New("the master sent no byte and kept the connection open: its silence on a forwarded command is not proven")
	}
	return Answer(r, err, c.Silent)
}

// check runs haproxy -c on the case's config, after the control.
func check(ctx context.Context, n *node.Node, c Case) (string, error) {
	if err := control(ctx, n); err != nil {
		return "", err
	}
	cfg, err := fixcase.CheckConfig(c)
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
	var env []string
	if c.Leaks {
		env = append(env, "ASAN_OPTIONS="+images.ASanLeakOptions)
	}
	code, out, err := n.RunBinaryEnv(rctx, env, args...)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("exit %d\n%s", code, out), nil
}

// connect opens one TCP connection to the case's port and sends a byte.
func connect(ctx context.Context, n *node.Node, c Case) (string, error) {
	port, err := c.ReachPort()
	if err != nil {
		return "", err
	}
	if err := n.Poke(ctx, Port(port), "x", time.Second); err != nil {
		return "", err
	}
	return "connected", nil
}

// request sends Send on the stats socket (a setup, checked), then a
// request to the case's port: its x-g header is the answer.
func request(ctx context.Context, n *node.Node, c Case) (string, error) {
	port, err := c.ReachPort()
	if err != nil {
		return "", err
	}
	if err := Setup(ctx, n, c.Send); err != nil {
		return "", err
	}
	resp, err := n.Get(ctx, Port(port), "/", 5*time.Second)
	if err != nil {
		return "", fmt.Errorf("the request: %w", err)
	}
	return "x-g: " + resp.Header.Get("x-g"), nil
}

// Setup sends commands a case makes before its trigger on the admin
// stats socket, and checks they took: HAProxy's whole answer says nothing
// but line feeds (a command that succeeds says nothing), and each `set
// table T key K data.F V` among them reads back F=V. An error is harp's:
// a case whose setup did not take decides nothing.
func Setup(ctx context.Context, n StatsNode, cmds string) error {
	r, err := n.Raw(ctx, node.StatsPort, cmds, cli.RawOptions{Wait: AnswerWait})
	if err == nil && !r.Closed {
		err = fmt.Errorf("no whole answer")
	}
	if err != nil {
		return fmt.Errorf("the setup %q: %w", text.OneLine(cmds, 120), err)
	}
	if strings.TrimSpace(r.Text) != "" {
		return fmt.Errorf("the setup %q did not take: HAProxy said %q", text.OneLine(cmds, 120), text.OneLine(r.Text, 200))
	}
	for _, w := range SetTables(cmds) {
		out, err := n.Stats(ctx, "show table "+w.Table+" key "+w.Key)
		if err != nil {
			return fmt.Errorf("reading back the setup's %s: %w", w, err)
		}
		if !strings.Contains(" "+strings.Join(strings.Fields(out), " ")+" ", " "+w.Field+"="+w.Value+" ") {
			return fmt.Errorf("the setup's %s did not take: show table says %q", w, text.OneLine(out, 200))
		}
	}
	return nil
}

// StatsNode is what Setup needs of a node: raw bytes and commands on its
// admin stats socket.
type StatsNode interface {
	Raw(ctx context.Context, port, payload string, o cli.RawOptions) (cli.Reply, error)
	Stats(ctx context.Context, cmd string) (string, error)
}

// Write is one `set table` of a setup: the entry's field and value.
type Write struct{ Table, Key, Field, Value string }

func (w Write) String() string {
	return fmt.Sprintf("%s key %s %s=%s", w.Table, w.Key, w.Field, w.Value)
}

var setTableRe = regexp.MustCompile(`^set table (\S+) key (\S+) data\.(\S+) (\S+)$`)

// SetTables reads the `set table T key K data.F V` commands of a setup
// (lines and ;-separated commands).
func SetTables(cmds string) []Write {
	var ws []Write
	for _, line := range strings.Split(cmds, "\n") {
		for _, cmd := range strings.Split(line, ";") {
			if m := setTableRe.FindStringSubmatch(strings.TrimSpace(cmd)); m != nil {
				ws = append(ws, Write{m[1], m[2], m[3], m[4]})
			}
		}
	}
	return ws
}

// halfClosedPeer connects to the peers bind, sends nothing and
// half-closes: HAProxy's close, or the connection still open after the
// wait, seen open on HAProxy's side too: its stream from harp's address
// still listed by show sess. A correct build closes at once (its applet
// sees the shutdown on its next call); the wait is the case's own bound.
// A reset is neither (harp's side or a proxy's): unknown, as is an open
// connection HAProxy lists no stream of.
func halfClosedPeer(ctx context.Context, n *node.Node, c Case) (string, error) {
	port, err := c.ReachPort()
	if err != nil {
		return "", err
	}
	fate, err := n.HalfClosed(ctx, Port(port), AnswerWait, func(src string) error {
		ss, err := n.Sessions(ctx, node.Current)
		if err != nil {
			return fmt.Errorf("the connection was still open after %s, and show sess could not be read: %w", AnswerWait, err)
		}
		for _, s := range ss {
			if s.Has("src=" + src) {
				return nil
			}
		}
		return fmt.Errorf("the connection was still open on harp's side after %s, but show sess lists no stream from %s", AnswerWait, src)
	})
	switch {
	case err != nil:
		return "", err
	case fate == cli.Open:
		return "still open after " + AnswerWait.String() + " (its stream still listed by show sess)", nil
	case fate == cli.Reset:
		return "", fmt.Errorf("the connection was reset, neither closed by HAProxy nor left open")
	}
	return "closed by haproxy", nil
}

// peerSession completes a handshake as the remote peer `remote` of the
// case's peers section (its port's bind) and runs the case's Session on a
// session that is harp's alone (remotepeer's Session): one that collided
// with HAProxy's own attempt to reach remote is run again, at most
// collisionTries times.
func peerSession(ctx context.Context, n *node.Node, c Case, run Session) (string, error) {
	port, err := c.ReachPort()
	if err != nil {
		return "", err
	}
	section, err := c.Peers()
	if err != nil {
		return "", err
	}
	addr, err := n.Addr(ctx, Port(port))
	if err != nil {
		return "", err
	}
	// The shared node holds every peer case's section, each with a remote
	// peer HAProxy keeps trying to reach.
	p := &remotepeer.Probe{Node: n, Addr: addr, Section: section, Local: "harp", Remote: "remote", OtherSections: true}
	return p.Session(ctx, peers.Options{}, collisionTries, func(pc *peers.Conn, tcp *net.TCPConn) (string, error) {
		return run(ctx, pc, tcp, p.State)
	})
}

const collisionTries = 3

// userPort is the stats socket at level user.
const userPort = "9997/tcp"

// control: the config without any case's lines loads on this build, so a
// refusal is the case's, not harp's config or a binary harp cannot run.
func control(ctx context.Context, n *node.Node) error {
	cfg, err := fixcase.CheckConfig(Case{})
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

// AnswerWait bounds one exchange; a slower one is harp's failure to
// observe, never HAProxy's answer.
const AnswerWait = 10 * time.Second

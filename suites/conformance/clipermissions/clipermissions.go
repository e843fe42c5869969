// Package clipermissions: runtime CLI permission levels. A command that
// changes state is refused on a socket below the level the documentation
// gives it, and what it would change is unchanged as an admin socket sees
// it; read commands work at their documented level. A violation is a
// security finding.
package clipermissions

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sort"
	"strings"
	"time"

	"github.com/harp-project/harp/harness/cli"
	"github.com/harp-project/harp/harness/clilevels"
	"github.com/harp-project/harp/harness/cliout"
	"github.com/harp-project/harp/harness/config"
	"github.com/harp-project/harp/harness/load"
	"github.com/harp-project/harp/harness/node"
	"github.com/harp-project/harp/harness/obs"
	"github.com/harp-project/harp/harness/scenario"
	"github.com/harp-project/harp/harness/verdict"
	"github.com/harp-project/harp/suites/conformance/clipermissions/judge"
)

var Suite = scenario.Register(&scenario.Scenario{
	ID:       judge.SuiteID,
	Upstream: "conformance: runtime CLI permission levels (security)",
	Title:    "State-changing CLI commands are refused below their documented level and change nothing",
	Summary:  "every state-changing runtime command of the build's level table sent on a `level user` and a `level operator` socket: refused, and the state it would change unchanged as an admin socket sees it; documented reads work at their level",
	Labels:   []string{"area:conformance", "area:cli"},
	Trials:   len(Sockets),
	Noun:     "sockets",
	Steps: []string{
		"Setup: one node with three stats sockets (admin, operator, user); frontend `web` tracking x-key in backend `tbl`'s stick table, reading map /etc/harp/m.map (k v0) and ACL file /etc/harp/a.acl (192.0.2.9); backend `be` with server `srv` (health and agent checks every hour); an entry harp-key gpc0=5 in `tbl`; 5 requests served; one client connection held open (its session is {sess}).",
		"Levels: fixtures/cli-levels/<version>.tsv of the build's major.minor, from its doc/management.txt (a command's own sentence) and configuration.txt's `level` option (\"user ... no change is allowed\"); the code's own check recorded beside. A version without a table is still checked on the user socket, with every table's state-changing commands: configuration.txt's `level user` rule is the same in every version (the operator and read trials then do not run, and the reason says so).",
		"Trials: the user socket, then the operator socket: each state-changing command whose documented level is above the socket's is sent there; before and after, the state it would change is read on the admin socket (the table's entries, the map's or ACL's contents, `show stat` of the frontend or server, `show info` limits, the held session in `show sess`).",
		"Expectation: every such command is refused (not answered as a success) and its state is unchanged; a change is reported as a security violation. Third trial: each read command with a documented level is sent at that level and must not be refused.",
	},
	Run: run,
})

// Sockets are the trials: the socket each one uses.
var Sockets = []string{"user", "operator", "reads"}

var ports = map[string]string{"admin": node.StatsPort, "operator": "9996/tcp", "user": "9995/tcp"}

const (
	mapFile = "/etc/harp/m.map"
	aclFile = "/etc/harp/a.acl"
	key     = "harp-key"
)

// Config renders the node's config.
func Config() (string, error) {
	return config.RenderText("conf-cli-permissions", `global
    nbthread 1
    stats socket ipv4@0.0.0.0:9998 level admin
    stats socket ipv4@0.0.0.0:9996 level operator
    stats socket ipv4@0.0.0.0:9995 level user
    stats timeout 1m

defaults
    mode http
    timeout connect 2s
    timeout client 1m
    timeout server 1m

frontend web
    bind 0.0.0.0:8080
    maxconn 100
    timeout client 10m
    http-request track-sc0 req.hdr(x-key) table tbl
    # the held session: it waits for a body that never comes
    http-request wait-for-body time 10m if { req.hdr(x-hold) -m found }
    http-request set-var(txn.m) req.hdr(host),map(`+mapFile+`)
    acl blocked src -f `+aclFile+`
    http-request deny if blocked
    default_backend be

backend be
    server srv 127.0.0.1:8081 check inter 1h agent-check agent-port 8082 agent-inter 1h

backend tbl
    stick-table type string len 32 size 1k expire 1h store gpc0

frontend srvfe
    bind 127.0.0.1:8081
    http-request return status 200 content-type text/plain string ok
`, nil)
}

func run(ctx context.Context, env *scenario.Env) verdict.Outcome {
	file, rows, err := clilevels.Table(env.Image.Version)
	noTable := ""
	if err != nil {
		// The user rule holds in every version: it is checked anyway,
		// the operator and read rows wait for a table.
		noTable = err.Error()
		if rows, err = clilevels.UserRule(); err != nil {
			return verdict.Outcome{Err: err}
		}
		file = "every table's state-changing commands (configuration.txt's `level user`: no change can be done)"
	}
	cfg, err := Config()
	if err != nil {
		return verdict.Outcome{Err: err}
	}
	n, web, out := env.StartServing(ctx, node.Options{Config: cfg, Ports: []string{"8080/tcp", ports["operator"], ports["user"]},
		Files: map[string]string{mapFile: "k v0\n", aclFile: "192.0.2.9\n"}}, 1, "8080/tcp")
	if n == nil {
		return out
	}
	// Counters to clear, and a session to shut down.
	for range 5 {
		if code := load.Get(ctx, web); code != 200 {
			return verdict.Outcome{Unmet: fmt.Sprintf("the frontend answered HTTP %d before the checks", code)}
		}
	}
	held, err := net.DialTimeout("tcp", web, 5*time.Second)
	if err != nil {
		return verdict.Outcome{Err: err}
	}
	defer held.Close()
	fmt.Fprintf(held, "POST / HTTP/1.1\r\nHost: held\r\nX-Hold: 1\r\nContent-Length: 100\r\n\r\n") // no body: the session stays
	sess, err := heldSession(ctx, n)
	if err != nil {
		return verdict.Outcome{Unmet: err.Error()}
	}
	// {newkey} is absent: a refused `set table` that still creates it shows.
	names := map[string]string{"{fe}": "web", "{be}": "be", "{srv}": "srv", "{table}": "tbl", "{key}": key, "{newkey}": "harp-new",
		"{map}": mapFile, "{acl}": aclFile, "{sess}": sess}
	return env.RunTrials(ctx, func(ctx context.Context, t *verdict.Trial) error {
		err := trial(ctx, t, n, rows, file, names)
		if err == nil && noTable != "" {
			// The user trial said what can be said without a table.
			t.Remark = noTable + ": only the `level user` rule was checked, not the operator socket nor the documented reads"
			return scenario.Stop
		}
		return err
	})
}

func trial(ctx context.Context, t *verdict.Trial, n *node.Node, rows []clilevels.Row, file string, names map[string]string) error {
	socket := Sockets[(t.N-1)%len(Sockets)]
	ev := &judge.Evidence{Table: file, Facts: judge.Facts{Socket: socket}}
	t.Evidence = ev
	defer func() { t.Checks, t.Violation, t.Unmet = judge.SocketChecks(ev.Facts) }()
	if err := n.SetEntry(ctx, node.StatsSocket, "tbl", key, "data.gpc0 5"); err != nil {
		ev.Facts.Setup = err.Error()
		return nil
	}
	for _, r := range rows {
		cmd := substitute(r.Command, names)
		if socket == "reads" {
			if r.Kind != "read" || r.Doc == "source" {
				continue // a read without a documented level is not judged
			}
			out, err := n.AskSocket(ctx, ports[r.DocLevel], cmd)
			c := judge.Call{Command: cmd, Level: r.DocLevel, Answer: first(out), Refused: readRefused(out)}
			switch {
			case err != nil:
				c.Err = err.Error() // harp's side, or a worker already gone
			case strings.TrimSpace(out) == "":
				c.Failed = "no answer"
			}
			ev.Facts.Reads = append(ev.Facts.Reads, c)
			continue
		}
		if r.Kind != "change" || !r.Above(socket) {
			continue
		}
		read := probe(cmd)
		if read == nil {
			ev.Facts.Unprobed = append(ev.Facts.Unprobed, cmd)
			continue
		}
		before := obs.From(read(ctx, n, names)) // a failed read is unknown: the other commands still run
		if b, seen := before.Get(); seen && strings.HasPrefix(cmd, "shutdown session ") && b != "held session listed: true" {
			ev.Facts.Setup = "the held session was gone before `shutdown session`: it could not be checked"
			return nil
		}
		out, ok, err := ask(ctx, n, socket, cmd)
		if errors.Is(err, cli.ErrNotSent) {
			// HAProxy never saw it: this command is unknown, the others
			// still run.
			ev.Facts.Changes = append(ev.Facts.Changes, judge.Call{Command: cmd, Level: r.DocLevel, CodeLevel: r.CodeLevel, Unread: "the command never reached the socket: " + err.Error()})
			continue
		}
		if err != nil {
			return fmt.Errorf("sending %q on the %s socket: %w", cmd, socket, err)
		}
		if !ok {
			ev.Facts.Setup = fmt.Sprintf("%q on the %s socket: the answer did not end with the socket's own `show cli level`: what HAProxy said is unknown", cmd, socket)
			return nil
		}
		after := obs.From(read(ctx, n, names))
		c := judge.Call{Command: cmd, Level: r.DocLevel, CodeLevel: r.CodeLevel, Answer: first(out), Refused: refusedAnswer(out)}
		switch {
		case before.State != obs.Seen || after.State != obs.Seen:
			c.Unread = fmt.Sprintf("before: %s; after: %s", orSeen(before), orSeen(after))
		case before.Value != after.Value:
			c.Changed = before.Value + " -> " + after.Value
		}
		ev.Facts.Changes = append(ev.Facts.Changes, c)
	}
	t.Notef("%s socket: %d commands sent (table %s), %d refused, %d changed state; %d without a state to read: %s",
		socket, len(ev.Facts.Changes)+len(ev.Facts.Reads), file, ev.Facts.Refused(), ev.Facts.Changed(), len(ev.Facts.Unprobed), strings.Join(ev.Facts.Unprobed, "; "))
	return nil
}

// ask sends a command followed by `show cli level` on a socket: an answer
// that ends with the socket's level is HAProxy's whole answer (an empty one
// is then a silent success, not a connection that closed early). Tried
// twice.
func ask(ctx context.Context, n *node.Node, socket, cmd string) (answer string, ok bool, err error) {
	for range 2 {
		out, err := n.AskSocket(ctx, ports[socket], cmd+"; show cli level")
		if err != nil {
			return "", false, err
		}
		lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
		if len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == socket {
			return strings.Join(lines[:len(lines)-1], "\n"), true, nil
		}
	}
	return "", false, nil
}

func substitute(cmd string, names map[string]string) string {
	for k, v := range names {
		cmd = strings.ReplaceAll(cmd, k, v)
	}
	return cmd
}

// refusedAnswer: HAProxy's refusal ("Permission denied", or a command
// hidden from the level: "Unknown command"); an empty answer or "Done" is
// a success; any other answer (an argument error) is no success either.
func refusedAnswer(out string) bool {
	a := strings.TrimSpace(out)
	return a != "" && !strings.HasPrefix(a, "Done")
}

// readRefused: a read answered with a refusal instead of its output.
func readRefused(out string) bool {
	for _, r := range []string{"Permission denied", "Unknown command", "insufficient privileges"} {
		if strings.Contains(out, r) {
			return true
		}
	}
	return false
}

func first(out string) string {
	l := strings.TrimSpace(strings.SplitN(strings.TrimSpace(out), "\n", 2)[0])
	if len(l) > 120 {
		l = l[:120]
	}
	return l
}

// heldSession finds the held connection's stream in `show sess`.
func heldSession(ctx context.Context, n *node.Node) (string, error) {
	var ptr string
	err := node.Poll(ctx, 5*time.Second, 100*time.Millisecond, func() (bool, error) {
		ss, _ := n.Sessions(ctx, node.StatsSocket) // none when it failed: read again
		for _, s := range ss {
			if s.Has("fe=web") {
				ptr = s.Ptr
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return "", fmt.Errorf("the held client connection never showed in show sess (5 s)")
	}
	return ptr, nil
}

type reader func(ctx context.Context, n *node.Node, names map[string]string) (string, error)

// probe says how to read, on the admin socket, the state a command would
// change (nil: none known).
func probe(cmd string) reader {
	has := func(s string) bool { return strings.Contains(cmd, s) }
	switch {
	case has(" table "):
		return func(ctx context.Context, n *node.Node, _ map[string]string) (string, error) {
			tb, err := n.Table(ctx, node.StatsSocket, "tbl")
			if err != nil {
				return "", err
			}
			var es []string
			for _, e := range tb.Entries {
				es = append(es, e.Key+" gpc0="+e.Data["gpc0"])
			}
			sort.Strings(es)
			return "[" + strings.Join(es, ", ") + "]", nil
		}
	case has(" map "):
		return contents("show map " + mapFile)
	case has(" acl "):
		return contents("show acl " + aclFile)
	case has("maxconn global"):
		return info("Maxconn")
	case has("rate-limit connections"):
		return info("ConnRateLimit")
	case has("rate-limit sessions"):
		return info("SessRateLimit")
	case has("shutdown session "):
		return func(ctx context.Context, n *node.Node, names map[string]string) (string, error) {
			out, err := n.Stats(ctx, "show sess")
			return fmt.Sprintf("held session listed: %v", strings.Contains(out, names["{sess}"]+":")), err
		}
	case has("clear counters"):
		return stat("web", "FRONTEND", "stot", "smax", "rate_max")
	case has("frontend"):
		return stat("web", "FRONTEND", "status", "slim")
	case has("server") || has("weight") || has("health") || has("agent"):
		return stat("be", "srv", "status", "weight", "slim", "check_status", "agent_status", "scur")
	}
	return nil
}

func contents(cmd string) reader {
	return func(ctx context.Context, n *node.Node, _ map[string]string) (string, error) {
		out, err := n.Stats(ctx, cmd)
		if err != nil {
			return "", err
		}
		var lines []string
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			if _, rest, ok := strings.Cut(l, " "); ok && strings.HasPrefix(l, "0x") {
				l = rest // entry pointers differ between readings
			}
			lines = append(lines, l)
		}
		return "[" + strings.Join(lines, ", ") + "]", nil
	}
}

func info(field string) reader {
	return func(ctx context.Context, n *node.Node, _ map[string]string) (string, error) {
		i, err := n.Info(ctx, node.StatsSocket)
		return field + "=" + i[field], err
	}
}

func stat(proxy, server string, cols ...string) reader {
	return func(ctx context.Context, n *node.Node, _ map[string]string) (string, error) {
		rows, err := n.Stat(ctx, node.StatsSocket)
		if err != nil {
			return "", err
		}
		r, ok := cliout.FindStat(rows, proxy, server)
		if !ok {
			return "", fmt.Errorf("show stat has no %s/%s", proxy, server)
		}
		return r.Columns(cols...), nil
	}
}

// orSeen is a reading's value, or why it is unknown.
func orSeen(o obs.Of[string]) string {
	if v, ok := o.Get(); ok {
		return v
	}
	return "unknown: " + o.Why
}

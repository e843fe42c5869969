// Package clipermissions: runtime CLI permission levels. A command that
// changes state is refused on a socket below the level the documentation
// gives it, and what it would change is unchanged as an admin socket sees
// it; read commands work at their documented level. A violation is a
// security finding.
package clipermissions

import (
	_ "embed"

	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/harp-project/harp/harness/core/cliout"
	"github.com/harp-project/harp/harness/core/config"
	"github.com/harp-project/harp/harness/core/obs"
	"github.com/harp-project/harp/harness/core/suite"
	"github.com/harp-project/harp/harness/core/text"
	"github.com/harp-project/harp/harness/core/verdict"
	"github.com/harp-project/harp/harness/live/cli"
	"github.com/harp-project/harp/harness/live/load"
	"github.com/harp-project/harp/harness/live/node"
	"github.com/harp-project/harp/harness/live/suiteenv"
	"github.com/harp-project/harp/suites/conformance/clipermissions/clilevels"
	"github.com/harp-project/harp/suites/conformance/clipermissions/judge"
)

// configTemplate is the suite's config, next to it (conf-cli-permissions.cfg.tmpl); the shared
// blocks (the global section) come from fixtures/templates.
//
//go:embed conf-cli-permissions.cfg.tmpl
var configTemplate string

var Suite = suite.Register(&suite.Suite{
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
	Run:       run,
	NoRegTest: "commands on stats sockets at levels user and operator, judged by what each changed: VTest's CLI speaks only on the admin socket it adds, and its raw client cannot match an answer",
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
	return config.RenderText("conf-cli-permissions.cfg.tmpl", configTemplate, map[string]string{"Map": mapFile, "ACL": aclFile})
}

func run(ctx context.Context, env *suiteenv.Env) verdict.Outcome {
	// Without a table the user rule, which holds in every version, is
	// checked anyway; the operator and read rows wait for a table.
	file, rows, noTable, err := clilevels.ForVersion(env.Image.Version)
	if err != nil {
		return verdict.Outcome{Err: err}
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
		// A request harp could not send or that got no answer is asked
		// again (load.Status): only HAProxy's own status decides.
		code := load.Status(ctx, web, 10*time.Second)
		if c, ok := code.Get(); !ok || c != 200 {
			return verdict.Outcome{Unmet: "the frontend answered HTTP " + obs.Text(code, strconv.Itoa) + " before the checks"}
		}
	}
	conn, err := net.DialTimeout("tcp", web, 5*time.Second)
	if err != nil {
		return verdict.Outcome{Err: err}
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: held\r\nX-Hold: 1\r\nContent-Length: 100\r\n\r\n") // no body: the session stays
	held, err := waitStream(ctx, n, node.StatsSocket, "fe=web", 5*time.Second, 100*time.Millisecond)
	if err != nil {
		return verdict.Outcome{Unmet: "the held client connection never showed in show sess (5 s)"}
	}
	// {newkey} is absent: a refused `set table` that still creates it shows.
	names := strings.NewReplacer("{fe}", "web", "{be}", "be", "{srv}", "srv", "{table}", "tbl", "{key}", key, "{newkey}", "harp-new",
		"{map}", mapFile, "{acl}", aclFile, "{sess}", held.Ptr)
	return env.RunTrials(ctx, func(ctx context.Context, t *verdict.Trial) error {
		err := trial(ctx, t, n, rows, file, names, held.Ptr)
		if err == nil && noTable != "" {
			// The user trial said what can be said without a table.
			t.Remark = noTable + ": only the `level user` rule was checked, not the operator socket nor the documented reads"
			return suiteenv.Stop
		}
		return err
	})
}

func trial(ctx context.Context, t *verdict.Trial, n *node.Node, rows []clilevels.Row, file string, names *strings.Replacer, sess string) error {
	socket := Sockets[(t.N-1)%len(Sockets)]
	ev := &judge.Evidence{Table: file, Facts: judge.Facts{Socket: socket}}
	t.Evidence = ev
	defer func() { t.Checks, t.Violation, t.Unmet = judge.SocketChecks(ev.Facts) }()
	if err := n.SetEntry(ctx, node.StatsSocket, "tbl", key, "data.gpc0 5"); err != nil {
		ev.Facts.Setup = err.Error()
		return nil
	}
	for _, r := range rows {
		cmd := names.Replace(r.Command)
		if socket == "reads" {
			if r.Kind != "read" || r.Doc == "source" {
				continue // a read without a documented level is not judged
			}
			out, err := n.AskSocket(ctx, ports[r.DocLevel], cmd)
			if err == nil && strings.TrimSpace(out) == "" {
				// A connection closed without a byte may be Docker's port
				// proxy's; asked again, a worker that answers says so (one
				// the command killed still gives none).
				if again, aerr := n.AskSocket(ctx, ports[r.DocLevel], cmd); aerr == nil {
					out = again
				}
			}
			c := judge.Call{Command: cmd, Level: r.DocLevel, Answer: text.FirstLine(out, 120), Refused: judge.Denied(out)}
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
		read := probe(cmd, sess)
		if read == nil {
			ev.Facts.Unprobed = append(ev.Facts.Unprobed, cmd)
			continue
		}
		before := obs.From(read(ctx, n)) // a failed read is unknown: the other commands still run
		if b, seen := before.Get(); seen && strings.HasPrefix(cmd, "shutdown session ") && b != "held session listed: true" {
			ev.Facts.Setup = "the held session was gone before `shutdown session`: it could not be checked"
			return nil
		}
		out, ok, err := askWhole(ctx, n, ports[socket], socket, cmd)
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
		after := obs.From(read(ctx, n))
		// Any answer but a success (a refusal, an argument error) is no
		// success.
		c := judge.Call{Command: cmd, Level: r.DocLevel, CodeLevel: r.CodeLevel, Answer: text.FirstLine(out, 120), Refused: !cliout.Succeeded(out)}
		c.Changed, c.Unread = obs.Diff(before, after)
		ev.Facts.Changes = append(ev.Facts.Changes, c)
	}
	t.Notef("%s socket: %d commands sent (table %s), %d refused, %d changed state; %d without a state to read: %s",
		socket, len(ev.Facts.Changes)+len(ev.Facts.Reads), file, ev.Facts.Refused(), ev.Facts.Changed(), len(ev.Facts.Unprobed), strings.Join(ev.Facts.Unprobed, "; "))
	return nil
}

// probe says how to read, on the admin socket, the state a command would
// change (nil: none known); sess is the held session's pointer.
func probe(cmd, sess string) reading {
	has := func(s string) bool { return strings.Contains(cmd, s) }
	switch {
	case has(" table "):
		return readTable(node.StatsSocket, "tbl", "gpc0")
	case has(" map "):
		return readList("show map " + mapFile)
	case has(" acl "):
		return readList("show acl " + aclFile)
	case has("maxconn global"):
		return readInfo(node.StatsSocket, "Maxconn")
	case has("rate-limit connections"):
		return readInfo(node.StatsSocket, "ConnRateLimit")
	case has("rate-limit sessions"):
		return readInfo(node.StatsSocket, "SessRateLimit")
	case has("shutdown session "):
		return func(ctx context.Context, n *node.Node) (string, error) {
			out, err := n.Stats(ctx, "show sess")
			return fmt.Sprintf("held session listed: %v", strings.Contains(out, sess+":")), err
		}
	case has("clear counters"):
		return readStat(node.StatsSocket, "web", "FRONTEND", "stot", "smax", "rate_max")
	case has("frontend"):
		return readStat(node.StatsSocket, "web", "FRONTEND", "status", "slim")
	case has("server") || has("weight") || has("health") || has("agent"):
		return readStat(node.StatsSocket, "be", "srv", "status", "weight", "slim", "check_status", "agent_status", "scur")
	}
	return nil
}

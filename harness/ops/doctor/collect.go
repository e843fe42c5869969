// Package doctor diagnoses stick-table replication between live HAProxy
// instances from their runtime sockets (show info, show peers, show table):
// whether a peers section is in use, each link's state seen from both ends,
// each instance's local identity, how far the tables diverge, and the
// likely cause with its evidence.
package doctor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/harp-project/harp/harness/core/cliout"
)

// Instance is what one runtime socket told.
type Instance struct {
	Socket   string                `json:"socket"`
	Name     string                `json:"name"`              // a label for reports (--name, else the socket)
	Node     string                `json:"node,omitempty"`    // show info "node" (the host name unless set)
	Version  string                `json:"version,omitempty"` // show info "Version"
	PID      int64                 `json:"pid,omitempty"`
	Sections []cliout.PeersSection `json:"peers_sections"`
	Tables   []cliout.Table        `json:"tables"`
	// Errors holds the commands that failed, with what the socket said.
	Errors map[string]string `json:"errors,omitempty"`
	// TooLarge marks the commands of Errors whose answer harp would not
	// read for its size: the socket answered, so no permission problem,
	// but what the answer holds is unknown.
	TooLarge map[string]bool `json:"too_large,omitempty"`
	// Unreachable says why the socket could not be read at all (then
	// nothing else is known of the instance).
	Unreachable string `json:"unreachable,omitempty"`
	// Raw answers, for evidence and captures.
	Raw map[string]string `json:"-"`
	// Digests are the tables' contents as compared, when they were read
	// into digests (CollectDigests) instead of Entries.
	Digests map[string]*TableDigest `json:"-"`
}

// Query sends one command on a runtime socket and returns the answer.
type Query func(ctx context.Context, cmd string) (string, error)

// denied says whether an answer is the CLI refusing a command at this
// socket's level (wordings differ between versions).
func denied(out string) bool {
	l := strings.ToLower(out)
	return strings.Contains(l, "permission denied") || strings.Contains(l, "access denied") || strings.Contains(l, "insufficient privileges") ||
		(strings.HasPrefix(l, "unknown command") && !strings.Contains(l, "table"))
}

// Collect asks one instance for what the diagnosis needs. Only a socket
// that cannot be reached at all is an error; refused commands are
// recorded in Errors.
func Collect(ctx context.Context, name, socket string, q Query) (Instance, error) {
	return collect(ctx, name, socket, q, func(in *Instance, t cliout.Table) cliout.Table { return in.readTable(ctx, q, t) })
}

// collect is Collect with each table listed by show table read by table.
func collect(ctx context.Context, name, socket string, q Query, table func(*Instance, cliout.Table) cliout.Table) (Instance, error) {
	in := Instance{Socket: socket, Name: name, Errors: map[string]string{}, Raw: map[string]string{}}
	if in.Name == "" {
		in.Name = socket
	}
	out, err := q(ctx, "show info")
	if err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) {
			return in, fmt.Errorf("%s: timed out waiting for the runtime socket's answer to show info", socket)
		}
		if errors.Is(err, errTooLarge) || errors.Is(err, errNotSocket) { // reached, and refused by harp
			return in, fmt.Errorf("%s: %w", socket, err)
		}
		return in, fmt.Errorf("%s: cannot reach the runtime socket: %w", socket, err)
	}
	in.Raw["show info"] = out
	info, err := cliout.ParseInfo(out)
	if err != nil || info["Version"] == "" {
		// An HTTP server, another daemon, garbage: not a permission problem.
		return in, fmt.Errorf("%s: not an HAProxy runtime socket (its answer to show info: %q)", socket, firstLine(out))
	}
	in.Node, in.Version, in.PID = info["node"], info["Version"], info.Int("Pid")
	if out, ok := in.ask(ctx, q, "show peers"); ok {
		if secs, err := cliout.ParsePeers(out); err == nil {
			in.Sections = secs
		} else {
			in.Errors["show peers"] = err.Error()
		}
	}
	if out, ok := in.ask(ctx, q, "show table"); ok {
		ts, err := cliout.ParseTables(out)
		if err != nil {
			in.Errors["show table"] = err.Error()
		}
		for _, t := range ts {
			in.Tables = append(in.Tables, table(&in, t))
		}
	}
	return in, nil
}

// ask sends cmd and keeps the answer; ok is false when the socket failed
// or refused, with its reason (its own words when it gave some) in Errors.
// An empty show peers is an answer: no section.
func (in *Instance) ask(ctx context.Context, q Query, cmd string) (string, bool) {
	out, err := q(ctx, cmd)
	in.Raw[cmd] = out
	switch {
	case err != nil:
		in.Errors[cmd] = err.Error()
		if errors.Is(err, errTooLarge) {
			in.tooLarge(cmd)
		}
	// No peers section and no table answer nothing: that is an answer.
	case denied(out) || strings.TrimSpace(out) == "" && cmd != "show peers" && cmd != "show table":
		in.Errors[cmd] = refusal(out)
	default:
		return out, true
	}
	return out, false
}

func (in *Instance) tooLarge(cmd string) {
	if in.TooLarge == nil {
		in.TooLarge = map[string]bool{}
	}
	in.TooLarge[cmd] = true
}

// refusal is what an answer refusing a command says: its line that says
// so, else its first line.
func refusal(out string) string {
	msg := strings.TrimSpace(firstLine(out))
	for _, l := range strings.Split(out, "\n") {
		if denied(l) {
			msg = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "#"))
		}
	}
	if msg == "" {
		msg = "empty answer"
	}
	return msg
}

// readTable reads one table show table lists; a table whose contents are
// refused is kept with its header alone.
func (in *Instance) readTable(ctx context.Context, q Query, t cliout.Table) cliout.Table {
	cmd := "show table " + t.Name
	if out, ok := in.ask(ctx, q, cmd); ok {
		if full, err := cliout.ParseTable(out); err == nil {
			t = full
		} else {
			in.Errors[cmd] = err.Error()
		}
	}
	return t
}

func firstLine(s string) string { l, _, _ := strings.Cut(strings.TrimSpace(s), "\n"); return l }

// CollectAll collects every socket at the same time, within one deadline
// for them all: a socket that cannot be read becomes an instance marked
// Unreachable, so that the others are still diagnosed.
func CollectAll(ctx context.Context, timeout time.Duration, names, sockets []string, dial func(string) Query) []Instance {
	return collectAll(ctx, timeout, names, sockets, func(ctx context.Context, name, s string) (Instance, error) {
		return Collect(ctx, name, s, dial(s))
	})
}

func collectAll(ctx context.Context, timeout time.Duration, names, sockets []string, collect func(ctx context.Context, name, socket string) (Instance, error)) []Instance {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	out := make([]Instance, len(sockets))
	var wg sync.WaitGroup
	for i, s := range sockets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			in, err := collect(ctx, names[i], s)
			if err == nil && ctx.Err() != nil {
				// Answers cut by the deadline would read as refusals.
				err = fmt.Errorf("%s: no complete answer within %s", s, timeout)
			}
			if err != nil {
				in = Instance{Name: names[i], Socket: s, Unreachable: err.Error()}
				if ctx.Err() != nil && !strings.Contains(err.Error(), "timed out") {
					in.Unreachable = fmt.Sprintf("%s: no complete answer within %s (%v)", s, timeout, err)
				}
			}
			out[i] = in
		}()
	}
	wg.Wait()
	return out
}

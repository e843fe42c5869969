package node

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/harp-project/harp/harness/core/cliout"
	"github.com/harp-project/harp/harness/core/obs"
)

// Which process a typed query asks.
const (
	// Current is the worker the master lists as current, looked up with
	// `show proc` before the command.
	Current = -1
	// StatsSocket is whichever worker holds the stats socket.
	StatsSocket = 0
)

// Query runs a runtime command on a worker: a pid (through the master
// CLI), Current, or StatsSocket. Every exchange goes into the transcript.
func (n *Node) Query(ctx context.Context, pid int, cmd string) (string, error) {
	switch pid {
	case StatsSocket:
		return n.Stats(ctx, cmd)
	case Current:
		p, err := n.CurrentWorker(ctx)
		if err != nil {
			return "", err
		}
		pid = p
	}
	return n.Worker(ctx, pid, cmd)
}

// Peers is `show peers`, parsed.
func (n *Node) Peers(ctx context.Context, pid int) ([]cliout.PeersSection, error) {
	raw, err := n.Query(ctx, pid, "show peers")
	if err != nil {
		return nil, err
	}
	return cliout.ParsePeers(raw)
}

// Section is one peers section of `show peers`.
func (n *Node) Section(ctx context.Context, pid int, name string) (cliout.PeersSection, error) {
	secs, err := n.Peers(ctx, pid)
	if err != nil {
		return cliout.PeersSection{}, err
	}
	s, ok := cliout.FindSection(secs, name)
	if !ok {
		return s, fmt.Errorf("show peers lists no section %q", name)
	}
	return s, nil
}

// Table is `show table <name>`, entries included, parsed.
func (n *Node) Table(ctx context.Context, pid int, name string) (cliout.Table, error) {
	raw, err := n.Query(ctx, pid, "show table "+name)
	if err != nil {
		return cliout.Table{}, fmt.Errorf("show table %s: %w", name, err)
	}
	return cliout.ParseTable(raw)
}

// Entry is one key of `show table <name>` (false when absent).
func (n *Node) Entry(ctx context.Context, pid int, table, key string) (cliout.Entry, bool, error) {
	tb, err := n.Table(ctx, pid, table)
	if err != nil {
		return cliout.Entry{}, false, err
	}
	e, ok := tb.Lookup(key)
	return e, ok, nil
}

// WaitEntry reads one key every interval until done holds for a reading
// that succeeded, or timeout passes (read at least once); it gives the
// last reading, whose error says that one failed.
func (n *Node) WaitEntry(ctx context.Context, pid int, table, key string, timeout, interval time.Duration, done func(e cliout.Entry, ok bool) bool) (e cliout.Entry, ok bool, err error) {
	Poll(ctx, timeout, interval, func() (bool, error) {
		e, ok, err = n.Entry(ctx, pid, table, key)
		return err == nil && done(e, ok), nil
	})
	return e, ok, err
}

// Info is `show info`, parsed.
func (n *Node) Info(ctx context.Context, pid int) (cliout.Info, error) {
	raw, err := n.Query(ctx, pid, "show info")
	if err != nil {
		return nil, fmt.Errorf("show info: %w", err)
	}
	return cliout.ParseInfo(raw)
}

// Stat is `show stat`, parsed.
func (n *Node) Stat(ctx context.Context, pid int) ([]cliout.StatRow, error) {
	raw, err := n.Query(ctx, pid, "show stat")
	if err != nil {
		return nil, fmt.Errorf("show stat: %w", err)
	}
	return cliout.ParseStat(raw)
}

// SetEntry writes an entry: `set table <table> key <key> <data>` (data
// such as "data.gpc0 1"). Any answer is HAProxy refusing it (*Refused).
func (n *Node) SetEntry(ctx context.Context, pid int, table, key, data string) error {
	return n.silent(ctx, pid, strings.TrimSpace(fmt.Sprintf("set table %s key %s %s", table, key, data)))
}

// SetEntries writes entries, `set table <table> key <keys[i]>
// data.<field> <values[i]>`, up to 100 commands to a line (joined by ";").
// Any answer is HAProxy refusing a line (*Refused).
func (n *Node) SetEntries(ctx context.Context, pid int, table, field string, keys, values []string) error {
	for from := 0; from < len(keys); from += 100 {
		var cmds []string
		for i := from; i < min(len(keys), from+100); i++ {
			cmds = append(cmds, fmt.Sprintf("set table %s key %s data.%s %s", table, keys[i], field, values[i]))
		}
		if err := n.silent(ctx, pid, strings.Join(cmds, ";")); err != nil {
			return err
		}
	}
	return nil
}

// ClearEntry removes one entry (`clear table <table> key <key>`).
func (n *Node) ClearEntry(ctx context.Context, pid int, table, key string) error {
	return n.silent(ctx, pid, fmt.Sprintf("clear table %s key %s", table, key))
}

// Silent runs a command whose success is an empty answer (set, clear,
// shutdown, ...); any answer is HAProxy refusing it (*Refused).
func (n *Node) Silent(ctx context.Context, pid int, cmd string) error { return n.silent(ctx, pid, cmd) }

func (n *Node) silent(ctx context.Context, pid int, cmd string) error {
	out, err := n.Query(ctx, pid, cmd)
	if err == nil && strings.TrimSpace(out) != "" {
		return &Refused{Command: cmd, Answer: strings.TrimSpace(out)}
	}
	return err
}

// WaitResync polls `show peers` on a worker until every named section
// reports its initial resync finished (flags 0x1|0x2). unmet says which
// never did, or that show peers kept failing; err is a section missing
// or the run ending. A process that has not finished its resync has
// nothing to teach its successor: suites wait for it before a reload.
func (n *Node) WaitResync(ctx context.Context, pid int, timeout time.Duration, sections ...string) (secs []cliout.PeersSection, unmet string, err error) {
	w := n.WaitResyncFor(ctx, pid, timeout, sections...)
	return w.Sections, w.Unmet, w.Err
}

// ResyncWait is what WaitResyncFor saw.
type ResyncWait struct {
	Sections []cliout.PeersSection
	Unmet    string
	// Stuck: for the second half of the wait at least, show peers
	// answered and the unfinished sections' flags did not change: the
	// resync was not slow but stopped, the build's own state, which
	// waiting longer or trying again does not change. (A lesson that ends
	// without setting the finished flag changes them once at its start.)
	Stuck bool
	// Failing: show peers kept failing to the end, so Unmet is harp's
	// failure to read the flags, not HAProxy's answer.
	Failing bool
	Err     error
}

// Observed is the resync's state as an observation: "" finished, or what
// HAProxy showed; unknown when the wait failed or show peers kept failing.
func (w ResyncWait) Observed() obs.Of[string] {
	switch {
	case w.Err != nil:
		return obs.Failure[string]("%v", w.Err)
	case w.Failing:
		return obs.Failure[string]("%s", w.Unmet)
	}
	return obs.Value(w.Unmet)
}

// WaitResyncFor is WaitResync, also telling a stopped resync from a slow one.
func (n *Node) WaitResyncFor(ctx context.Context, pid int, timeout time.Duration, sections ...string) ResyncWait {
	var w ResyncWait
	pending, lastErr := "", ""
	start := time.Now()
	lastChange := start // the last time show peers failed or an unfinished section's flags moved
	flags := map[string]uint64{}
	err := Poll(ctx, timeout, 100*time.Millisecond, func() (bool, error) {
		got, err := n.Peers(ctx, pid)
		if err != nil {
			lastErr, lastChange = err.Error(), time.Now()
			return false, nil
		}
		w.Sections, pending, lastErr = got, "", ""
		for _, want := range sections {
			s, ok := cliout.FindSection(got, want)
			if !ok {
				return false, fmt.Errorf("show peers lists no section %q", want)
			}
			if !s.ResyncFinished() {
				if f, seen := flags[s.Name]; !seen || f != s.Flags {
					flags[s.Name], lastChange = s.Flags, time.Now()
				}
				if pending == "" {
					pending = fmt.Sprintf("initial resync of section %s never finished (flags=0x%x after %s)", s.Name, s.Flags, timeout)
				}
			}
		}
		return pending == "", nil
	})
	still := time.Since(lastChange)
	switch {
	case err == nil:
	case errors.Is(err, ErrDeadline) && lastErr != "":
		w.Unmet = fmt.Sprintf("show peers on worker %d kept failing for %s: %s", pid, timeout, lastErr)
		w.Failing = true
	case errors.Is(err, ErrDeadline):
		w.Unmet = pending
		if w.Stuck = still >= timeout/2; w.Stuck {
			w.Unmet += fmt.Sprintf(", unchanged for the last %s", still.Round(time.Second))
		}
	default:
		w.Err = err
	}
	return w
}

// Refused is HAProxy answering a command with a refusal (a CLI error
// message), as opposed to the command not reaching it.
type Refused struct{ Command, Answer string }

func (r *Refused) Error() string { return fmt.Sprintf("%s refused: %s", r.Command, r.Answer) }

// RefusedBy is HAProxy's answer: obs.From files the error as a refusal.
func (r *Refused) RefusedBy() string { return r.Answer }

// IsRefused says whether err is HAProxy refusing a command.
func IsRefused(err error) bool {
	var r *Refused
	return errors.As(err, &r)
}

// MasterExit is whether the master is gone: an obs.Exit with Process
// "master" when it exited, an empty one while it runs, unknown when
// Docker could not say.
func (n *Node) MasterExit(ctx context.Context) obs.Of[obs.Exit] {
	running, code, err := n.Running(ctx)
	switch {
	case err != nil:
		return obs.Failure[obs.Exit]("is the master running: %v", err)
	case running:
		return obs.Value(obs.Exit{})
	}
	e := obs.Exit{Process: "master", Code: code}
	if code > 128 {
		e.Signal = signalName(code - 128)
	}
	return obs.Value(e)
}

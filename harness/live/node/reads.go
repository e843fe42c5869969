package node

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"time"

	"github.com/harp-project/harp/harness/core/cliout"
	"github.com/harp-project/harp/harness/live/cli"
)

// Raw sends exactly payload to one of the node's ports, on the node's
// own address (no proxy between: a close, an abort and a reset are
// HAProxy's and harp's own), and reads the reply (cli.Raw; errors name
// the port unless o.Name does). Raw bytes are a trigger, not a command:
// they are not in the transcript.
func (n *Node) Raw(ctx context.Context, port, payload string, o cli.RawOptions) (cli.Reply, error) {
	addr, err := n.DirectAddr(ctx, port)
	if err != nil {
		return cli.Reply{}, err
	}
	o.Name = cmp.Or(o.Name, port)
	return cli.Raw(ctx, addr, payload, o)
}

// Dial connects to one of the node's ports (within 5 s).
func (n *Node) Dial(ctx context.Context, port string) (*net.TCPConn, error) {
	addr, err := n.Addr(ctx, port)
	if err != nil {
		return nil, err
	}
	return cli.Dial(ctx, addr, port)
}

// Tables is `show table` without a name, parsed: every table's head, no
// entry. (A dump of a table kills the expired entries it walks; the list
// touches none.)
func (n *Node) Tables(ctx context.Context, pid int) ([]cliout.Table, error) {
	raw, err := n.Query(ctx, pid, "show table")
	if err != nil {
		return nil, fmt.Errorf("show table: %w", err)
	}
	return cliout.ParseTables(raw)
}

// Pool is one pool of `show pools`.
func (n *Node) Pool(ctx context.Context, pid int, name string) (cliout.Pool, error) {
	raw, err := n.Query(ctx, pid, "show pools")
	if err != nil {
		return cliout.Pool{}, fmt.Errorf("show pools: %w", err)
	}
	ps, err := cliout.ParsePools(raw)
	if err != nil {
		return cliout.Pool{}, err
	}
	p, ok := cliout.FindPool(ps, name)
	if !ok {
		return p, fmt.Errorf("no %s pool in show pools", name)
	}
	return p, nil
}

// Loops is the poll-loop count of `show activity` (cliout.Loops).
func (n *Node) Loops(ctx context.Context, pid int) (int64, error) {
	raw, err := n.Query(ctx, pid, "show activity")
	if err != nil {
		return 0, fmt.Errorf("show activity: %w", err)
	}
	return cliout.Loops(raw)
}

// LoopsPerSecond is the worker's poll loops per second: show activity's
// loop count read twice, window apart (a fixed window measured, not a
// wait). It is the shared measure of a spinning process: an idle worker
// loops a few times a second, one woken in a loop hundreds of thousands.
func (n *Node) LoopsPerSecond(ctx context.Context, pid int, window time.Duration) (int64, error) {
	sample := func() (int64, time.Time, error) {
		l, err := n.Loops(ctx, pid)
		return l, time.Now(), err
	}
	l0, t0, err := sample()
	if err != nil {
		return 0, err
	}
	select {
	case <-time.After(window):
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	l1, t1, err := sample()
	if err != nil {
		return 0, err
	}
	return int64(float64(l1-l0) / t1.Sub(t0).Seconds()), nil
}

// Sessions is `show sess`, parsed: the streams.
func (n *Node) Sessions(ctx context.Context, pid int) ([]cliout.Stream, error) {
	raw, err := n.Query(ctx, pid, "show sess")
	if err != nil {
		return nil, fmt.Errorf("show sess: %w", err)
	}
	return cliout.ParseSess(raw), nil
}

// FrontendSessions is a frontend's current sessions (show stat's scur on
// the stats socket): a connection HAProxy has taken in, not only Docker's
// port proxy.
func (n *Node) FrontendSessions(ctx context.Context, frontend string) (int64, error) {
	rows, err := n.Stat(ctx, StatsSocket)
	if err != nil {
		return 0, err
	}
	fe, ok := cliout.FindStat(rows, frontend, "FRONTEND")
	if !ok {
		return 0, fmt.Errorf("no frontend %s in show stat", frontend)
	}
	return fe.Int("scur"), nil
}

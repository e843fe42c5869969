package clipermissions

import (
	"context"
	"fmt"
	"time"

	"github.com/harp-project/harp/harness/core/cliout"
	"github.com/harp-project/harp/harness/live/node"
	"github.com/harp-project/harp/suites/conformance/clipermissions/judge"
)

// The state this suite reads before and after each command, and how it
// asks a socket of a level: its own code (#43), moved from harness/live/node.

// Reading is a read of some state as text, to compare before and after a
// command that should not change it.
type reading func(ctx context.Context, n *node.Node) (string, error)

// readTable reads `show table <table>` as "[key field=v, ...]", sorted.
func readTable(pid int, table, field string) reading {
	return func(ctx context.Context, n *node.Node) (string, error) {
		tb, err := n.Table(ctx, pid, table)
		if err != nil {
			return "", err
		}
		return tb.EntriesText(field), nil
	}
}

// readList reads cmd's answer on the stats socket (`show map <file>`,
// `show acl <file>`) as judge.Listed: its lines without entry pointers.
func readList(cmd string) reading {
	return func(ctx context.Context, n *node.Node) (string, error) {
		out, err := n.Stats(ctx, cmd)
		if err != nil {
			return "", err
		}
		return judge.Listed(out), nil
	}
}

// readInfo reads one field of `show info` as "field=value".
func readInfo(pid int, field string) reading {
	return func(ctx context.Context, n *node.Node) (string, error) {
		i, err := n.Info(ctx, pid)
		return field + "=" + i[field], err
	}
}

// readStat reads columns of one `show stat` row (proxy/server) as
// StatRow.Columns gives them.
func readStat(pid int, proxy, server string, cols ...string) reading {
	return func(ctx context.Context, n *node.Node) (string, error) {
		rows, err := n.Stat(ctx, pid)
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

// askWhole sends cmd on a stats socket of the given level (port as for
// AskSocket) followed by `show cli level`: an answer that ends with the
// level is HAProxy's whole answer to cmd (judge.CutLevel), and ok. Tried
// twice; ok is false when neither answer ended so.
func askWhole(ctx context.Context, n *node.Node, port, level, cmd string) (answer string, ok bool, err error) {
	for range 2 {
		out, err := n.AskSocket(ctx, port, cmd+"; show cli level")
		if err != nil {
			return "", false, err
		}
		if answer, ok := judge.CutLevel(out, level); ok {
			return answer, true, nil
		}
	}
	return "", false, nil
}

// waitStream reads `show sess` every interval until a stream's line holds
// word (cliout.Stream.Has, "fe=web"); a failed read counts as none. After
// timeout it returns Poll's error.
func waitStream(ctx context.Context, n *node.Node, pid int, word string, timeout, interval time.Duration) (cliout.Stream, error) {
	var found cliout.Stream
	err := node.Poll(ctx, timeout, interval, func() (bool, error) {
		ss, _ := n.Sessions(ctx, pid) // none when it failed: read again
		for _, s := range ss {
			if s.Has(word) {
				found = s
				return true, nil
			}
		}
		return false, nil
	})
	return found, err
}

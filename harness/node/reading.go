package node

import (
	"context"
	"fmt"
	"time"

	"github.com/harp-project/harp/harness/cliout"
)

// Reading is a read of some state as text, to compare before and after a
// command that should not change it.
type Reading func(ctx context.Context, n *Node) (string, error)

// ReadTable reads `show table <table>` as "[key field=v, ...]", sorted.
func ReadTable(pid int, table, field string) Reading {
	return func(ctx context.Context, n *Node) (string, error) {
		tb, err := n.Table(ctx, pid, table)
		if err != nil {
			return "", err
		}
		return tb.EntriesText(field), nil
	}
}

// ReadList reads cmd's answer on the stats socket (`show map <file>`,
// `show acl <file>`) as cliout.Listed: its lines without entry pointers.
func ReadList(cmd string) Reading {
	return func(ctx context.Context, n *Node) (string, error) {
		out, err := n.Stats(ctx, cmd)
		if err != nil {
			return "", err
		}
		return cliout.Listed(out), nil
	}
}

// ReadInfo reads one field of `show info` as "field=value".
func ReadInfo(pid int, field string) Reading {
	return func(ctx context.Context, n *Node) (string, error) {
		i, err := n.Info(ctx, pid)
		return field + "=" + i[field], err
	}
}

// ReadStat reads columns of one `show stat` row (proxy/server) as
// StatRow.Columns gives them.
func ReadStat(pid int, proxy, server string, cols ...string) Reading {
	return func(ctx context.Context, n *Node) (string, error) {
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

// AskWhole sends cmd on a stats socket of the given level (port as for
// AskSocket) followed by `show cli level`: an answer that ends with the
// level is HAProxy's whole answer to cmd (cliout.CutLevel), and ok. Tried
// twice; ok is false when neither answer ended so.
func (n *Node) AskWhole(ctx context.Context, port, level, cmd string) (answer string, ok bool, err error) {
	for range 2 {
		out, err := n.AskSocket(ctx, port, cmd+"; show cli level")
		if err != nil {
			return "", false, err
		}
		if answer, ok := cliout.CutLevel(out, level); ok {
			return answer, true, nil
		}
	}
	return "", false, nil
}

// WaitStream reads `show sess` every interval until a stream's line holds
// word (cliout.Stream.Has, "fe=web"); a failed read counts as none. After
// timeout it returns Poll's error.
func (n *Node) WaitStream(ctx context.Context, pid int, word string, timeout, interval time.Duration) (cliout.Stream, error) {
	var found cliout.Stream
	err := Poll(ctx, timeout, interval, func() (bool, error) {
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

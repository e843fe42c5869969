package peerfixes

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/harp-project/harp/harness/core/cliout"
	"github.com/harp-project/harp/harness/live/fixrun"
	"github.com/harp-project/harp/harness/live/node"
	"github.com/harp-project/harp/harness/live/peers"
)

const (
	// maxUpdatesEntries are set in the second table at once.
	maxUpdatesEntries = 20
	// maxUpdatesWait: a build that pushes only on its 3 s heartbeat needs
	// a minute for the entries; one that does not stall, milliseconds.
	maxUpdatesWait = 15 * time.Second
)

// pushPastEmptyTable completes a session as remote that reads all the
// node pushes, sets entries in the second of two tables, and times how
// long the node takes to push them all (show peers: the table's last
// pushed update reaches its local update).
func pushPastEmptyTable(ctx context.Context, n *node.Node) (string, error) {
	addr, err := n.Addr(ctx, fixrun.Port("p"))
	if err != nil {
		return "", err
	}
	// A peer that reads everything, answers a resync request and sends
	// its heartbeat every 3 s, but acks nothing: only HAProxy's own
	// wakeups (and harp's heartbeats) drive its applet.
	conn, err := dialAs(ctx, addr, "remote", peers.Options{Heartbeat: 3 * time.Second, Answer: true, NoAcks: true})
	if err != nil {
		return "", err
	}
	defer conn.Close()

	remote := func() (cliout.Peer, cliout.PeerTable, error) {
		s, err := n.Section(ctx, node.Current, "p")
		if err != nil {
			return cliout.Peer{}, cliout.PeerTable{}, err
		}
		r, ok := s.Peer("remote")
		if !ok {
			return r, cliout.PeerTable{}, fmt.Errorf("show peers lists no peer remote")
		}
		for _, t := range r.Tables {
			if t.Name == "t2" || strings.HasSuffix(t.Name, "/t2") {
				return r, t, nil
			}
		}
		return r, cliout.PeerTable{}, fmt.Errorf("show peers lists no table t2 under peer remote")
	}
	if err := node.Poll(ctx, 5*time.Second, 100*time.Millisecond, func() (bool, error) {
		r, _, err := remote()
		return err == nil && r.Established(), err
	}); err != nil {
		return "", fmt.Errorf("harp's session as remote never showed established: %w", err)
	}
	var cmds []string
	for k := range maxUpdatesEntries {
		cmds = append(cmds, fmt.Sprintf("set table t2 key harp-update-%d data.gpc0 1", k))
	}
	set := time.Now()
	if err := fixrun.Setup(ctx, n, strings.Join(cmds, ";")+"\n"); err != nil {
		return "", err
	}
	var last cliout.PeerTable
	var established bool
	err = node.Poll(ctx, maxUpdatesWait, 50*time.Millisecond, func() (bool, error) {
		r, t, err := remote()
		if err != nil {
			return false, err
		}
		last, established = t, r.Established()
		return !established || t.LocalUpdate > 0 && t.LastPushed >= t.LocalUpdate, nil
	})
	took := time.Since(set).Round(10 * time.Millisecond)
	switch {
	case err != nil && last.LocalUpdate == 0:
		return "", fmt.Errorf("table t2 never counted the %d entries as local updates: %w", maxUpdatesEntries, err)
	case !established:
		return "", fmt.Errorf("harp's session as remote ended before the updates were pushed (last pushed %d of %d)", last.LastPushed, last.LocalUpdate)
	case err != nil:
		return fmt.Sprintf("table t2: last pushed %d of local update %d after %s", last.LastPushed, last.LocalUpdate, maxUpdatesWait), nil
	}
	return fmt.Sprintf("table t2: all %d updates pushed in %s", maxUpdatesEntries, took), nil
}

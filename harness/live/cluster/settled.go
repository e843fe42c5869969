package cluster

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/harp-project/harp/harness/core/cliout"
	"github.com/harp-project/harp/harness/live/node"
)

// Settled says what could still move table between the members ("" when
// nothing could): a session not established, a resync not finished, or
// a member with a local update of the table not pushed to a peer, or not
// acknowledged by it. A failed reading is never settled. With no writer
// left, a correct build then sends no entry any more: it sends one only
// as a local update or in a resync, and an acknowledged update is
// applied.
func (c *Cluster) Settled(ctx context.Context, table string) string {
	for _, m := range c.Members {
		sec, err := m.Node.Section(ctx, node.StatsSocket, c.Section)
		if err != nil {
			return fmt.Sprintf("%s: show peers: %v", m.Name, err)
		}
		if !sec.ResyncFinished() {
			return m.Name + ": resync not finished"
		}
		for _, p := range sec.Peers {
			if p.Local {
				continue
			}
			if !p.Established() {
				return fmt.Sprintf("%s->%s: not established", m.Name, p.Name)
			}
			found := false
			for _, pt := range p.Tables {
				if pt.Name != table {
					continue
				}
				found = true
				if why := InFlight(pt); why != "" {
					return fmt.Sprintf("%s->%s: %s", m.Name, p.Name, why)
				}
			}
			if !found {
				return fmt.Sprintf("%s->%s: show peers lists no %s", m.Name, p.Name, table)
			}
		}
	}
	return ""
}

// InFlight says what of a table a member has not yet handed to a peer
// ("" when every local update was pushed and acknowledged). Update ids
// are 32-bit and wrap: pushed is at most 2^30 ahead, never the "far past"
// value HAProxy gives a peer whose acknowledgement is too old.
func InFlight(pt cliout.PeerTable) string {
	local, pushed, acked := uint32(pt.LocalUpdate), uint32(pt.LastPushed), uint32(pt.PeerAcked)
	if ahead := pushed - local; pushed != local && ahead >= 1<<30 {
		return fmt.Sprintf("pushed %d of local updates up to %d", pushed, local)
	}
	if acked != pushed {
		return fmt.Sprintf("pushed %d, acknowledged %d", pushed, acked)
	}
	return ""
}

// SpreadSettled is Spread on every member, ending too, with keys still
// missing, once two readings in a row found the cluster Settled and the
// same keys where they were: the caller writes none of them again, so a
// key missing then never arrives. settled is how long into the wait that
// came (0: it did not).
func (c *Cluster) SpreadSettled(ctx context.Context, table string, keys []string, timeout time.Duration) (seen map[string]time.Time, settled time.Duration) {
	seen = map[string]time.Time{}
	t0, last := time.Now(), ""
	_ = node.Poll(ctx, timeout, 20*time.Millisecond, func() (bool, error) {
		why := c.Settled(ctx, table) // before the tables: a reading begun once settled
		on, read := map[string]int{}, true
		for _, m := range c.Members {
			t, err := m.Table(ctx, table)
			if err != nil {
				read = false
				continue
			}
			for _, e := range t.Entries {
				on[e.Key]++
			}
		}
		now := time.Now()
		for _, k := range keys {
			if _, done := seen[k]; !done && on[k] == len(c.Members) {
				seen[k] = now
			}
		}
		if len(seen) == len(keys) {
			return true, nil
		}
		state := ""
		if why == "" && read {
			var where []string // how many members hold each key
			for _, k := range keys {
				where = append(where, fmt.Sprint(on[k]))
			}
			state = strings.Join(where, " ")
		}
		if state != "" && state == last {
			settled = time.Since(t0)
			return true, nil
		}
		last = state
		return false, nil
	})
	return seen, settled
}

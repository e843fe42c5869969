package peerfixes

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/harp-project/harp/harness/core/peerwire"
	"github.com/harp-project/harp/harness/live/fixrun"
	"github.com/harp-project/harp/harness/live/node"
	"github.com/harp-project/harp/harness/live/peers"
)

// shardKeys: entries harp's first shard peer teaches the node, each
// updated on the node afterwards.
const shardKeys = 16

// learntShardRouting connects as the node's two remote peers, r1 (shard
// 1) and r2 (shard 2), teaches the node shardKeys entries from r1, then
// sets each on the node's stats socket: a node that knows each learnt
// entry's shard sends its update to the peer of that shard alone. The
// answer counts, for each key, the sessions its new value reached.
func learntShardRouting(ctx context.Context, n *node.Node) (string, error) {
	addr, err := n.Addr(ctx, fixrun.Port("p"))
	if err != nil {
		return "", err
	}
	sessions := map[string]*peers.Conn{}
	for _, name := range []string{"r1", "r2"} {
		c, err := dialAs(ctx, addr, name, peers.DefaultOptions)
		if err != nil {
			return "", err
		}
		defer c.Close()
		sessions[name] = c
	}
	key := func(i int) []byte { return []byte{10, 7, 0, byte(i + 1)} }
	keyText := func(i int) string { return fmt.Sprintf("10.7.0.%d", i+1) }
	def := peerwire.TableDef{ID: 1, Name: "tsh", KeyType: peerwire.KeyIPv4, KeyLen: 4, Types: []int{2}, Expire: 3600000}
	msgs := []peerwire.Message{def.Encode()}
	for i := range shardKeys {
		msgs = append(msgs, peerwire.Update{HasID: true, ID: uint32(i + 1), Key: key(i), Values: map[int]peerwire.Value{2: {Ints: []uint64{1}}}}.MustEncode(def))
	}
	if err := sessions["r1"].Send(msgs...); err != nil {
		return "", fmt.Errorf("teaching the entries from r1: %w", err)
	}
	if err := node.Poll(ctx, 5*time.Second, 100*time.Millisecond, func() (bool, error) {
		t, err := n.Table(ctx, node.StatsSocket, "tsh")
		if err != nil {
			return false, err
		}
		for i := range shardKeys {
			if e, ok := t.Lookup(keyText(i)); !ok || e.Data["gpc0"] != "1" {
				return false, nil
			}
		}
		return true, nil
	}); err != nil {
		return "", fmt.Errorf("the node never held the %d entries r1 taught: %w", shardKeys, err)
	}
	var cmds []string
	for i := range shardKeys {
		cmds = append(cmds, fmt.Sprintf("set table tsh key %s data.gpc0 2", keyText(i)))
	}
	if err := fixrun.Setup(ctx, n, strings.Join(cmds, ";")+"\n"); err != nil {
		return "", err
	}
	// The node has pushed every local update once show peers says so for
	// both sessions; then what each session received is final.
	if err := node.Poll(ctx, 5*time.Second, 100*time.Millisecond, func() (bool, error) {
		s, err := n.Section(ctx, node.Current, "p")
		if err != nil {
			return false, err
		}
		for _, name := range []string{"r1", "r2"} {
			r, ok := s.Peer(name)
			if !ok || len(r.Tables) == 0 || r.Tables[0].LocalUpdate == 0 || r.Tables[0].LastPushed < r.Tables[0].LocalUpdate {
				return false, nil
			}
		}
		return true, nil
	}); err != nil {
		return "", fmt.Errorf("show peers never counted the %d local updates as pushed to both sessions: %w", shardKeys, err)
	}
	// The node wrote its updates by then; what follows them on a session
	// arrives after them. A heartbeat (the node's, after 3 s without
	// sending) read more than a second after that moment was sent after
	// the updates.
	pushed := time.Now()
	reached := make([]int, shardKeys)
	for _, name := range []string{"r1", "r2"} {
		wctx, cancel := context.WithTimeout(ctx, 8*time.Second)
		_, err := sessions[name].WaitFor(wctx, func(e peers.Event) bool {
			return e.Msg.Class == peerwire.ClassControl && e.Msg.Type == peerwire.CtrlHeartbeat && e.At.After(pushed.Add(time.Second))
		})
		cancel()
		if err != nil {
			return "", fmt.Errorf("no heartbeat from the node on %s's session after its updates (8 s): %w", name, err)
		}
		for _, ev := range sessions[name].Events() {
			if ev.Update == nil || ev.Table == nil || ev.Table.Name != "tsh" {
				continue
			}
			if v, ok := ev.Update.Int("gpc0"); ok && v == 2 {
				for i := range shardKeys {
					if ev.Update.KeyString(*ev.Table) == keyText(i) {
						reached[i]++
					}
				}
			}
		}
	}
	counts := map[int]int{}
	for _, r := range reached {
		counts[r]++
	}
	return fmt.Sprintf("of %d learnt entries updated on the node: %d reached one shard peer, %d none, %d both", shardKeys, counts[1], counts[0], counts[2]), nil
}

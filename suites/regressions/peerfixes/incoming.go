package peerfixes

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"time"

	"github.com/harp-project/harp/harness/core/peerwire"
	"github.com/harp-project/harp/harness/live/fixrun"
	"github.com/harp-project/harp/harness/live/node"
	"github.com/harp-project/harp/harness/live/peers"
)

const (
	// incomingUpdates: harp's peer pushes this many new entries as fast
	// as it can write them; a buffer holds a thousand or more.
	incomingUpdates = 50000
	// incomingAtOnce is the case's tune.peers.max-updates-at-once: a build
	// that applies it to what it receives needs at least
	// incomingUpdates/incomingAtOnce calls of the peer applet.
	incomingAtOnce = 10
)

// peerAppletCalls is the calls counter of the applet of an incoming
// peers stream in `show sess all`: its back side (app1) is the applet. An
// outgoing one (the node's own attempt to reach its remote) has it in front.
var peerAppletCalls = regexp.MustCompile(`app1=\S+ [^\n]*?applet=<PEER>[^\n]*? calls=(\d+)`)

// incomingAtOnceCalls completes a session as the node's remote peer,
// pushes incomingUpdates new entries, waits until the table holds them
// all, and counts the calls its peer applet took to read them.
func incomingAtOnceCalls(ctx context.Context, n *node.Node) (string, error) {
	addr, err := n.Addr(ctx, fixrun.Port("p"))
	if err != nil {
		return "", err
	}
	conn, err := dialAs(ctx, addr, "remote", peers.DefaultOptions)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	calls := func() (int64, error) {
		out, err := n.Stats(ctx, "show sess all")
		if err != nil {
			return 0, err
		}
		ms := peerAppletCalls.FindAllStringSubmatch(out, -1)
		if len(ms) != 1 {
			return 0, fmt.Errorf("show sess all lists %d incoming peer sessions, want harp's session alone", len(ms))
		}
		return strconv.ParseInt(ms[0][1], 10, 64)
	}
	before, err := calls()
	if err != nil {
		return "", err
	}
	def := peerwire.TableDef{ID: 1, Name: "tin", KeyType: peerwire.KeyIPv4, KeyLen: 4, Types: []int{2}, Expire: 3600000}
	if err := conn.Send(def.Encode()); err != nil {
		return "", fmt.Errorf("the table definition: %w", err)
	}
	// Every update encoded first and written at once: HAProxy, not harp,
	// is then the slower side, and each read fills its buffer.
	var burst []byte
	for i := range incomingUpdates {
		u := peerwire.Update{HasID: true, ID: uint32(i + 1), Key: []byte{10, byte(i >> 16), byte(i >> 8), byte(i)}, Values: map[int]peerwire.Value{2: {Ints: []uint64{1}}}}
		burst = append(burst, u.MustEncode(def).Encode()...)
	}
	if err := conn.SendRaw(burst); err != nil {
		return "", fmt.Errorf("the %d updates (%d bytes): %w", incomingUpdates, len(burst), err)
	}
	var used int
	if err := node.Poll(ctx, 30*time.Second, 200*time.Millisecond, func() (bool, error) {
		ts, err := n.Tables(ctx, node.StatsSocket)
		if err != nil {
			return false, err
		}
		for _, t := range ts {
			if t.Name == "tin" {
				used = t.Used
			}
		}
		return used >= incomingUpdates, nil
	}); err != nil {
		return "", fmt.Errorf("table tin holds %d of the %d entries pushed (30 s): %w", used, incomingUpdates, err)
	}
	after, err := calls()
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("the peer applet took %d calls to read %d updates (max-updates-at-once %d)", after-before, incomingUpdates, incomingAtOnce), nil
}

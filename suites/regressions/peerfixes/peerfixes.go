// Package peerfixes: upstream's fixed bugs of the peers protocol (what a
// peer's connection or session sends), one case file each
// (fixtures/upstream-fixes/peers), run by harness/live/fixrun; harp plays the
// remote peer. Each case is a named check (upstream-fixes-peers/<case>),
// so docs/upstream-bugs.md reads every fix's verdict from the same run.
package peerfixes

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/harp-project/harp/harness/core/cliout"
	"github.com/harp-project/harp/harness/core/peerwire"
	"github.com/harp-project/harp/harness/core/suite"
	"github.com/harp-project/harp/harness/live/fixrun"
	"github.com/harp-project/harp/harness/live/peers"
	"github.com/harp-project/harp/suites/regressions/peerfixes/judge"
)

var Suite = suite.Register(fixrun.Suite(fixrun.Area{
	ID:       "upstream-fixes-peers",
	Upstream: "regressions: upstream's fixed peers-protocol bugs",
	Title:    "Peers connections and sessions from upstream's fixed bugs (half-closed, truncated, about unknown tables) end or last as their fixes made them, and none kills the worker",
	Summary:  "one node; harp connects to its peers bind or completes a session as its remote peer, and each case expects what its upstream fix made HAProxy do; cases a build is too old for are not applicable",
	Labels:   []string{"area:regressions", "area:peers"},
	Cases:    judge.Cases,
	Sessions: map[string]fixrun.Session{
		"peer-unknown-table-traffic-keeps-session": unknownTableOnly,
		"peer-truncated-varint-then-close":         truncatedThenClose,
	},
}))

// truncatedThenClose sends an update message whose length varint never
// ends, then half-closes: HAProxy must close its side.
func truncatedThenClose(ctx context.Context, c *peers.Conn, tcp *net.TCPConn, _ fixrun.Remote) (string, error) {
	if err := c.SendRaw([]byte{peerwire.ClassStickTable, peerwire.StktUpdate, 0xf0}); err != nil {
		return "", err
	}
	tcp.CloseWrite()
	select {
	case <-c.Closed():
		if byPeer, why := c.Ended(); !byPeer {
			return "", fmt.Errorf("harp's client ended the session itself: %v", why)
		}
		return "closed by haproxy", nil
	case <-time.After(fixrun.AnswerWait):
		// Neither the fix's close nor the bug's spin (that worker dies):
		// run then finds the worker answering, and this decides nothing.
		return "", fmt.Errorf("the session was still open after %s", fixrun.AnswerWait)
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// unknownTableOnly sends a definition of a table the node lacks, then one
// update of it a second, until show peers has shown two of HAProxy's
// reconnect checks passed (at most 11 s: two checks, 5 s apart, come in
// that time). The handshake sets the peer's alive flag and a check clears
// it; harp sends no heartbeat, so a second check that keeps the session
// found the flag set by harp's messages about the unknown table since the
// first: the session is kept, as the fix made it. On a build without the
// fix that second check cuts it.
func unknownTableOnly(ctx context.Context, c *peers.Conn, _ *net.TCPConn, remote fixrun.Remote) (string, error) {
	def := peerwire.TableDef{ID: 1, Name: "harp-nosuch", KeyType: peerwire.KeyIPv4, KeyLen: 4, Types: []int{2}, Expire: 60000}
	if err := c.Send(def.Encode()); err != nil {
		return "", err
	}
	t0, last := time.Now(), time.Now()
	var checks checkCounter
	for i := 1; i <= 11; i++ {
		// harp's own pace decides nothing: a gap that spans a reconnect
		// check's worth of the 5 s period would let HAProxy cut a session
		// that its messages keep alive on a fixed build too.
		if gap := time.Since(last); gap > maxGap {
			return "", fmt.Errorf("harp sent nothing for %s between two updates: too slow to judge", gap.Round(100*time.Millisecond))
		}
		last = time.Now()
		m := peerwire.Update{HasID: true, ID: uint32(i), Key: []byte{10, 0, 0, byte(i)}, Values: map[int]peerwire.Value{2: {Ints: []uint64{1}}}}.MustEncode(def)
		if err := c.SendRaw(m.Encode()); err != nil {
			select {
			case <-c.Closed():
			case <-time.After(time.Second):
			}
		}
		next := time.After(time.Second) // the pace of the traffic, not a wait for an outcome
	pace:
		for {
			select {
			case <-c.Closed():
				byPeer, why := c.Ended()
				return closedAnswer(byPeer, why, c.SendGap(), time.Since(t0))
			case <-next:
				break pace
			case <-time.After(checkPoll):
				if r, err := remote(ctx); err == nil && checks.read(r) >= 2 {
					if gap := c.SendGap(); gap > maxGap {
						return "", fmt.Errorf("harp sent nothing for %s: the session's fate says nothing of the messages", gap.Round(100*time.Millisecond))
					}
					return fmt.Sprintf("open after %s: two reconnect checks passed", time.Since(t0).Round(100*time.Millisecond)), nil
				}
			case <-ctx.Done():
				return "", ctx.Err()
			}
		}
	}
	if gap := c.SendGap(); gap > maxGap {
		return "", fmt.Errorf("harp sent nothing for %s: the session's fate says nothing of the messages", gap.Round(100*time.Millisecond))
	}
	return fmt.Sprintf("open after %s", time.Since(t0).Round(100*time.Millisecond)), nil
}

// checkPoll: how often show peers is read for a passed check.
const checkPoll = 200 * time.Millisecond

// checkCounter counts HAProxy's reconnect checks that kept the session,
// from successive readings of the remote peer: the reconnect timer shown
// higher than the reading before and at 3 s or more, the session still
// established. A check that cuts the session sets the timer to at most
// 2049 ms; a reading that failed or shows no timer counts nothing.
type checkCounter struct {
	last   time.Duration
	seen   bool
	passed int
}

func (k *checkCounter) read(p cliout.Peer) int {
	cur, never, ok := p.Delay("reconnect")
	if !ok || never {
		return k.passed
	}
	if k.seen && cur > k.last && cur >= 3*time.Second && p.Established() {
		k.passed++
	}
	k.last, k.seen = cur, true
	return k.passed
}

// maxGap: harp's longest silence that still leaves every reconnect check
// (5 s apart) a message of harp's to find.
const maxGap = 2500 * time.Millisecond

// closedAnswer is HAProxy closing the session as the case's answer, or
// why it is none: harp's client ended it, or harp was silent long enough
// (starved: its goroutine not run, f084f4d said "closed by haproxy after
// 6s" then) that HAProxy dropped a peer it heard nothing from, which a
// fixed build does too.
func closedAnswer(byPeer bool, why error, sendGap, after time.Duration) (string, error) {
	switch {
	case !byPeer:
		return "", fmt.Errorf("harp's client ended the session itself: %v", why)
	case sendGap > maxGap:
		return "", fmt.Errorf("HAProxy closed the session after harp sent nothing for %s: a silent peer's drop, which says nothing of the messages", sendGap.Round(100*time.Millisecond))
	}
	return fmt.Sprintf("closed by haproxy after %s", after.Round(100*time.Millisecond)), nil
}

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
	"strings"
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
	Drives: map[string]fixrun.Drive{
		"peer-stalled-reader-no-sync-storm":    stalledReader,
		"peer-updates-past-empty-table-pushed": pushPastEmptyTable,
		"peer-incoming-updates-obey-at-once":   incomingAtOnceCalls,
		"peer-learnt-entry-keeps-its-shard":    learntShardRouting,
	},
	Sessions: map[string]fixrun.Session{
		"peer-unknown-table-traffic-keeps-session": unknownTableOnly,
		"peer-truncated-varint-then-close":         truncatedThenClose,
		"peer-table-key-type-out-of-range-asan":    keyTypeOutOfRange,
		"peer-dict-id-out-of-range-refused":        dictIDOutOfRange,
		"peer-oversized-server-key-taught-asan":    oversizedServerKeyTaught,
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

// The cases' tables are backends' stick-tables that name their peers
// section: on the wire, their names are the backends' from 2.6 to 3.4
// (a table declared in a peers section is "/<name>" on 3.4).

// keyTypeOutOfRange defines the node's table tkt with key type 8, one
// past the last the protocol knows, then again with its real type, and
// sends one update of it. The answer is HAProxy acknowledging that update:
// the worker read the bad definition, ignored it (a fixed build, or a plain
// one whose read past the key-type table went unseen) and went on; an
// asan build without the fix aborts on the read.
func keyTypeOutOfRange(ctx context.Context, c *peers.Conn, _ *net.TCPConn, remote fixrun.Remote) (string, error) {
	bad := peerwire.TableDef{ID: 1, Name: "tkt", KeyType: 8, KeyLen: 4, Types: []int{2}, Expire: 3600000}
	good := peerwire.TableDef{ID: 2, Name: "tkt", KeyType: peerwire.KeyIPv4, KeyLen: 4, Types: []int{2}, Expire: 3600000}
	u := peerwire.Update{HasID: true, ID: 1, Key: []byte{10, 0, 0, 1}, Values: map[int]peerwire.Value{2: {Ints: []uint64{7}}}}.MustEncode(good)
	if err := c.Send(bad.Encode(), good.Encode(), u); err != nil {
		return "", err
	}
	return learntOrClosed(ctx, c, remote, "tkt", 1)
}

// dictIDOutOfRange sends an update of the node's table tks (a string
// key of 32 bytes, 33 on the wire with its terminating NUL) whose
// server_key carries a dictionary entry with a value and id 129, one past
// the 128 entries of the receiver's cache, then a well-formed update. A
// fixed build refuses the first as malformed and closes the session; a
// build without the fix writes past its cache (an asan build aborts, a
// plain one may die or go on) and takes the second in.
func dictIDOutOfRange(ctx context.Context, c *peers.Conn, _ *net.TCPConn, remote fixrun.Remote) (string, error) {
	def := peerwire.TableDef{ID: 1, Name: "tks", KeyType: peerwire.KeyString, KeyLen: 33, Types: []int{2, 19}, Expire: 3600000}
	entry := func(id uint64, val string) []byte {
		b := peerwire.AppendVarint(nil, id)
		b = peerwire.AppendVarint(b, uint64(len(val)))
		return append(b, val...)
	}
	bad := peerwire.Update{HasID: true, ID: 1, Key: []byte("k1"), Values: map[int]peerwire.Value{2: {Ints: []uint64{1}}, 19: {Dict: entry(129, "harp-srv")}}}.MustEncode(def)
	next := peerwire.Update{HasID: true, ID: 2, Key: []byte("k2"), Values: map[int]peerwire.Value{2: {Ints: []uint64{2}}, 19: {Dict: entry(1, "harp-srv")}}}.MustEncode(def)
	if err := c.Send(def.Encode(), bad, next); err != nil {
		// A fixed build closes on the bad update, maybe before the next
		// one is written: HAProxy's close is the answer, not the write.
		return closedOr(c, err)
	}
	return learntOrClosed(ctx, c, remote, "tks", 2)
}

// oversizedServerKeyTaught plants an entry of the node's table tko whose
// server_key is a 16360-byte dictionary value (HAProxy takes values up to
// its buffer's size), proven taken in (show peers' last_get), then asks
// for a resync: HAProxy teaches harp its table, that entry included. A
// fixed build finds the value too big to encode and gives up (it closes
// the session); a build without the fix copies it past the end of its
// 16 KB buffer, which an asan build aborts on. The answer is what the
// session became; the worker's death is the case's failure.
func oversizedServerKeyTaught(ctx context.Context, c *peers.Conn, _ *net.TCPConn, remote fixrun.Remote) (string, error) {
	def := peerwire.TableDef{ID: 1, Name: "tko", KeyType: peerwire.KeyString, KeyLen: 33, Types: []int{2, 19}, Expire: 3600000}
	val := strings.Repeat("s", 16360)
	entry := peerwire.AppendVarint(nil, 1)
	entry = peerwire.AppendVarint(entry, uint64(len(val)))
	entry = append(entry, val...)
	u := peerwire.Update{HasID: true, ID: 1, Key: []byte("k-big"), Values: map[int]peerwire.Value{2: {Ints: []uint64{1}}, 19: {Dict: entry}}}.MustEncode(def)
	if err := c.Send(def.Encode(), u); err != nil {
		return "", err
	}
	planted, err := learntOrClosed(ctx, c, remote, "tko", 1)
	if err != nil {
		return "", err
	}
	if !strings.HasPrefix(planted, "update 1 taken in") {
		return "", fmt.Errorf("the oversized entry was not planted: %s", planted)
	}
	if err := c.Send(peerwire.Control(peerwire.CtrlResyncRequest)); err != nil {
		return "", err
	}
	wctx, cancel := context.WithTimeout(ctx, fixrun.AnswerWait)
	defer cancel()
	ev, err := c.WaitFor(wctx, func(e peers.Event) bool {
		return e.Msg.Class == peerwire.ClassControl && (e.Msg.Type == peerwire.CtrlResyncFinished || e.Msg.Type == peerwire.CtrlResyncPartial)
	})
	switch {
	case err == nil:
		return fmt.Sprintf("planted; the resync asked for ended (%v)", ev.Msg), nil
	case ctx.Err() != nil:
		return "", ctx.Err()
	}
	select {
	case <-c.Closed():
		if byPeer, why := c.Ended(); !byPeer {
			return "", fmt.Errorf("harp's client ended the session itself: %v", why)
		}
		return "planted; HAProxy closed the session while teaching", nil
	default:
	}
	return "", fmt.Errorf("the resync asked for neither ended nor closed the session within %s", fixrun.AnswerWait)
}

// closedOr is "closed by haproxy" when a write failed because HAProxy
// had closed the session (seen within a second), else the write's error.
func closedOr(c *peers.Conn, err error) (string, error) {
	select {
	case <-c.Closed():
		if byPeer, _ := c.Ended(); byPeer {
			return "closed by haproxy", nil
		}
	case <-time.After(time.Second):
	}
	return "", err
}

// learntOrClosed is HAProxy's answer to harp's updates of table (its
// section/name in show peers): the remote peer's last_get for it reached
// id (HAProxy took that update in), or HAProxy closed the session first.
// Neither within AnswerWait is harp's failure to observe; a worker that
// died under it is the fixrun's to see.
func learntOrClosed(ctx context.Context, c *peers.Conn, remote fixrun.Remote, table string, id uint64) (string, error) {
	deadline := time.After(fixrun.AnswerWait)
	last := "no reading"
	t0 := time.Now()
	for {
		select {
		case <-c.Closed():
			if byPeer, why := c.Ended(); !byPeer {
				return "", fmt.Errorf("harp's client ended the session itself: %v", why)
			}
			// HAProxy drops a peer it heard nothing from after 5 s (harp
			// sends no heartbeat here): a close that late may be that
			// drop, which says nothing of the messages.
			if after := time.Since(t0); after >= silentDrop {
				return "", fmt.Errorf("HAProxy closed the session %s after harp's messages, late enough to be a silent peer's drop", after.Round(100*time.Millisecond))
			}
			return "closed by haproxy", nil
		case <-deadline:
			return "", fmt.Errorf("HAProxy neither took update %d of %s in nor closed the session within %s (last reading: %s)", id, table, fixrun.AnswerWait, last)
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(checkPoll):
		}
		r, err := remote(ctx)
		if err != nil {
			last = err.Error()
			continue
		}
		for _, t := range r.Tables {
			if t.Name == table {
				last = fmt.Sprintf("last_get=%d", t.LastGet)
				if t.LastGet >= id {
					return fmt.Sprintf("update %d taken in (last_get %d), session open", id, t.LastGet), nil
				}
			}
		}
	}
}

// silentDrop: a close this long after harp's messages may be HAProxy
// dropping a peer it heard nothing from (5 s), not its answer to them.
const silentDrop = 4 * time.Second

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

package learnedentries

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/harp-project/harp/harness/obs"
	"github.com/harp-project/harp/harness/peers"
	"github.com/harp-project/harp/harness/verdict"
)

func TestJudge(t *testing.T) {
	for _, c := range []struct {
		name             string
		f                Facts
		violation, unmet string
	}{
		{"held", Facts{Kind: "crafted: huge expiry", Observed: []string{"a timed update with expire 2147483647 ms made ce-006 expire in 9998 ms (gpc0=4)"}}, "", ""},
		{"expiry beyond the table's", Facts{Kind: "crafted: huge expiry", Violations: []string{"a timed update with expire 2147483647 ms made ce-006 expire in 2147483000 ms, beyond the table's 10s"}},
			"crafted: huge expiry: a timed update with expire 2147483647 ms made ce-006 expire in 2147483000 ms, beyond the table's 10s", ""},
		{"several violations are all named", Facts{Kind: "crafted: unknown table", Violations: []string{"nodeC closed harp's session", "an update for table `nosuch` (which nodeC lacks) was stored in `t`"}},
			"crafted: unknown table: nodeC closed harp's session; an update for table `nosuch` (which nodeC lacks) was stored in `t`", ""},
		{"an unmet precondition outweighs what was seen", Facts{Kind: "expire, learnt at runtime", Unmet: "A no longer holds rt-001: B's loss of it cannot be told from A's",
			Violations: []string{"B dropped rt-001 before reading its expiry"}}, "", "expire, learnt at runtime: A no longer holds rt-001: B's loss of it cannot be told from A's"},
	} {
		v, u := Judge(c.f)
		if v != c.violation || u != c.unmet {
			t.Errorf("%s:\n got  %q, %q\n want %q, %q", c.name, v, u, c.violation, c.unmet)
		}
	}
}

// The crafted messages are well-formed for the definitions they follow.
func TestCraftedMessages(t *testing.T) {
	if _, err := craftedConfig(); err != nil {
		t.Fatal(err)
	}
	def := peers.TableDef{ID: 1, Name: "/t", KeyType: peers.KeyString, KeyLen: 33, Types: []int{2}, Expire: 10000} // as 3.0.11 sends it
	m := update(def, []byte("ce-001"), gpc0(4), true, 1<<31-1)
	if !strings.Contains(m.String(), "timed") && m.Type != 0x85 && m.Type != 0x86 {
		t.Errorf("a timed update is not sent as one: %s", m)
	}
}

// A session that ends is nodeC's doing only when nodeC closed it: harp's
// decoder giving up on the stream is harp's (today's code said "nodeC
// closed harp's session" for both).
func TestWhoEndedTheSession(t *testing.T) {
	for _, c := range []struct {
		name  string
		then  []byte // what the fake nodeC sends after the status line; nil: it closes
		want  verdict.Verdict
		words string
	}{
		{"nodeC closes", nil, verdict.Reproduced, "nodeC closed harp's session after the messages"},
		{"harp's decoder gives up", []byte{0x0a, 0x84, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, verdict.Inconclusive, "ended on harp's side"},
	} {
		harp, nodeC := net.Pipe()
		go func() {
			buf := make([]byte, 4096)
			nodeC.Read(buf) // the hello
			nodeC.Write([]byte("200\n"))
			if c.then != nil {
				nodeC.Write(c.then)
				time.Sleep(time.Second) // nodeC keeps the session open
			}
			nodeC.Close()
		}()
		conn, status, err := peers.Handshake(context.Background(), harp, peers.Hello{Remote: "harp", Local: "remote"}, peers.Options{})
		if err != nil || status != 200 {
			t.Fatalf("%s: handshake %d %v", c.name, status, err)
		}
		<-conn.Closed()
		f := Facts{Kind: "crafted: unknown table"}
		(&setup{}).ended(&f, conn, "after the messages")
		v, u := Judge(f)
		tr := verdict.Trial{N: 1, Violation: v, Unmet: u, Evidence: &Evidence{Facts: f}}
		got, _, reason := verdict.Decide(verdict.Outcome{Trials: []verdict.Trial{tr}}, "checks")
		if got != c.want || !strings.Contains(reason, c.words) {
			t.Errorf("%s: %s (%s)", c.name, got, reason)
		}
	}
}

// A reading that failed is unknown: the check decides nothing, even with
// a violation recorded beside it (today's 2 s WaitMesh after writing a
// table B lacks, and a failing read at the end of an expiry, were
// violations).
func TestUnreadDecidesNothing(t *testing.T) {
	f := Facts{Kind: "table the receiver lacks", Violations: []string{"after A wrote a table B lacks, the link is down"}}
	f.unread("show peers at the end of 15s: node2: i/o timeout")
	f.unread("a second failure is not kept")
	if f.Unread.Why != "show peers at the end of 15s: node2: i/o timeout" {
		t.Fatal(f.Unread)
	}
	v, u := Judge(f)
	tr := verdict.Trial{N: 1, Violation: v, Unmet: u, Evidence: &Evidence{Facts: f}}
	if got, _, reason := verdict.Decide(verdict.Outcome{Trials: []verdict.Trial{tr}}, "checks"); got != verdict.Inconclusive {
		t.Fatalf("%s (%s)", got, reason)
	}
	if obs.Unknowns(Facts{Kind: "x"}) != nil {
		t.Fatal("a check that read everything has nothing unknown")
	}
}

package craftedupdates

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/harp-project/harp/harness/config"
	"github.com/harp-project/harp/harness/peers"
	"github.com/harp-project/harp/harness/verdict"
	"github.com/harp-project/harp/suites/conformance/craftedupdates/judge"
)

// The crafted messages are well-formed for the definitions they follow.
func TestCraftedMessages(t *testing.T) {
	if _, err := config.Render(judge.SuiteID+".cfg.tmpl", map[string]any{"Threads": 1, "LocalPeer": "harp"}); err != nil {
		t.Fatal(err)
	}
	def := peers.TableDef{ID: 1, Name: "/t", KeyType: peers.KeyString, KeyLen: 33, Types: []int{2}, Expire: 10000} // as 3.0.11 sends it
	m := update(def, []byte("ce-001"), gpc0(4), true, 1<<31-1)
	if !strings.Contains(m.String(), "timed") && m.Type != 0x85 && m.Type != 0x86 {
		t.Errorf("a timed update is not sent as one: %s", m)
	}
}

// A session that ends is the node's doing only when the node closed it: harp's
// decoder giving up on the stream is harp's (the code once said "nodeC
// closed harp's session" for both).
func TestWhoEndedTheSession(t *testing.T) {
	for _, c := range []struct {
		name  string
		then  []byte // what the fake nodeC sends after the status line; nil: it closes
		want  verdict.Verdict
		words string
	}{
		{"the node closes", nil, verdict.Reproduced, "the node closed harp's session after the messages"},
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
		f := judge.Facts{Kind: "unknown table"}
		ended(&f, conn, "after the messages")
		v, u := judge.Check(f)
		tr := verdict.Trial{N: 1, Violation: v, Unmet: u, Evidence: &judge.Evidence{Facts: f}}
		got, _, reason := verdict.Decide(verdict.Outcome{Trials: []verdict.Trial{tr}}, "checks")
		if got != c.want || !strings.Contains(reason, c.words) {
			t.Errorf("%s: %s (%s)", c.name, got, reason)
		}
	}
}

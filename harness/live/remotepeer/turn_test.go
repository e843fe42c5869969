package remotepeer

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/harp-project/harp/harness/core/obs"
	"github.com/harp-project/harp/harness/core/verdict"
	"github.com/harp-project/harp/harness/live/peers"
)

// A session that ends is the node's doing only when the node closed it:
// harp's decoder giving up on the stream is harp's (conf-crafted-updates
// once said "nodeC closed harp's session" for both).
func TestEnded(t *testing.T) {
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
		f := obs.KindRecord{Kind: "unknown table"}
		Ended(&f.Record, conn, "after the messages")
		v, u := f.Decide(f.Kind)
		tr := verdict.Trial{N: 1, Violation: v, Unmet: u, Evidence: &obs.KindEvidence{Facts: f}}
		got, _, reason := verdict.Decide(verdict.Outcome{Trials: []verdict.Trial{tr}}, "checks")
		if got != c.want || !strings.Contains(reason, c.words) {
			t.Errorf("%s: %s (%s)", c.name, got, reason)
		}
	}
}

package judge

import (
	"testing"

	"github.com/harp-project/harp/harness/core/obs"
	"github.com/harp-project/harp/harness/core/verdict"
)

func TestJudge(t *testing.T) {
	for _, c := range []struct {
		name             string
		f                Facts
		violation, unmet string
	}{
		{"held", Facts{Kind: "stored types differ", Record: obs.Record{Observed: []string{"B stores ty-004 as gpc0=5 gpc1=0 (A's http_req_cnt dropped)"}}}, "", ""},
		{"expiry beyond the table's", Facts{Kind: "expire, learnt by resync", Record: obs.Record{Violations: []string{"B's entry rs-002 expires in 3599000 ms, beyond B's table expire 4s (A's is 1h)"}}},
			"expire, learnt by resync: B's entry rs-002 expires in 3599000 ms, beyond B's table expire 4s (A's is 1h)", ""},
		{"an unmet precondition outweighs what was seen", Facts{Kind: "expire, learnt at runtime", Record: obs.Record{Unmet: "A no longer holds rt-001: B's loss of it cannot be told from A's",
			Violations: []string{"B dropped rt-001 before reading its expiry"}}}, "", "expire, learnt at runtime: A no longer holds rt-001: B's loss of it cannot be told from A's"},
	} {
		v, u := Check(c.f)
		if v != c.violation || u != c.unmet {
			t.Errorf("%s:\n got  %q, %q\n want %q, %q", c.name, v, u, c.violation, c.unmet)
		}
	}
}

// A reading that failed is unknown: the check decides nothing, even with
// a violation recorded beside it (today's 2 s WaitMesh after writing a
// table B lacks, and a failing read at the end of an expiry, were
// violations).
func TestUnreadDecidesNothing(t *testing.T) {
	f := Facts{Kind: "table the receiver lacks", Record: obs.Record{Violations: []string{"after A wrote a table B lacks, the link is down"}}}
	f.NotRead("show peers at the end of 15s: node2: i/o timeout")
	f.NotRead("a second failure is not kept")
	if f.Unread.Why != "show peers at the end of 15s: node2: i/o timeout" {
		t.Fatal(f.Unread)
	}
	v, u := Check(f)
	tr := verdict.Trial{N: 1, Violation: v, Unmet: u, Evidence: &Evidence{Facts: f}}
	if got, _, reason := verdict.Decide(verdict.Outcome{Trials: []verdict.Trial{tr}}, "checks"); got != verdict.Inconclusive {
		t.Fatalf("%s (%s)", got, reason)
	}
	if obs.Unknowns(Facts{Kind: "x"}) != nil {
		t.Fatal("a check that read everything has nothing unknown")
	}
}

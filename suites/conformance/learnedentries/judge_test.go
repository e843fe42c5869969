package learnedentries

import (
	"strings"

	"testing"

	"github.com/harp-project/harp/harness/peers"
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

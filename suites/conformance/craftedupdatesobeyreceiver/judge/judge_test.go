package judge

import (
	"testing"

	"github.com/harp-project/harp/harness/core/obs"
)

func TestJudge(t *testing.T) {
	for _, c := range []struct {
		name             string
		f                Facts
		violation, unmet string
	}{
		{"held", Facts{Kind: "huge expiry", Record: obs.Record{Observed: []string{"a timed update with expire 2147483647 ms made ce-006 expire in 9998 ms (gpc0=4)"}}}, "", ""},
		{"expiry beyond the table's", Facts{Kind: "huge expiry", Record: obs.Record{Violations: []string{"a timed update with expire 2147483647 ms made ce-006 expire in 2147483000 ms, beyond the table's 10s"}}},
			"huge expiry: a timed update with expire 2147483647 ms made ce-006 expire in 2147483000 ms, beyond the table's 10s", ""},
		{"several violations are all named", Facts{Kind: "unknown table", Record: obs.Record{Violations: []string{"the node closed harp's session", "an update for table `nosuch` (which the node lacks) was stored in `t`"}}},
			"unknown table: the node closed harp's session; an update for table `nosuch` (which the node lacks) was stored in `t`", ""},
		{"an unmet precondition outweighs what was seen", Facts{Kind: "huge expiry", Record: obs.Record{Unmet: "the crafted timed update (ce-001, expire 2147483647 ms) was never applied: its expiry cannot be judged",
			Violations: []string{"the node closed harp's session after the messages"}}}, "", "huge expiry: the crafted timed update (ce-001, expire 2147483647 ms) was never applied: its expiry cannot be judged"},
	} {
		v, u := Check(c.f)
		if v != c.violation || u != c.unmet {
			t.Errorf("%s:\n got  %q, %q\n want %q, %q", c.name, v, u, c.violation, c.unmet)
		}
	}
}

package updatesbothways

import (
	"testing"
	"time"
)

func TestJudge(t *testing.T) {
	b := 5 * time.Second
	for _, c := range []struct {
		name             string
		f                Facts
		violation, unmet string
	}{
		{"B's update reaches A: held", Facts{Kind: "updated by the CLI", Bound: b, Learned: "1", OnA: "2", OnB: "2"}, "", ""},
		{"B's update never reaches A", Facts{Kind: "updated by traffic", Bound: b, Learned: "1", OnA: "1", OnB: "2"},
			`updated by traffic: B's update (gpc0 2) did not reach A within 5s (A holds gpc0="1")`, ""},
		{"after a reload B's update never reaches A", Facts{Kind: "updated after B was reloaded", Before: "reload", Bound: b, Learned: "1", Kept: "1", OnA: "1", OnB: "2"},
			`updated after B was reloaded: B's update (gpc0 2) did not reach A within 5s (A holds gpc0="1")`, ""},
		{"A's write never reaches B", Facts{Kind: "updated by the CLI", Bound: b}, "updated by the CLI: A's write never reached B within 5s", ""},
		{"B learnt other data", Facts{Kind: "updated by the CLI", Bound: b, Learned: "3"}, "updated by the CLI: B learnt gpc0=3 from A's write of 1", ""},
		{"a table that could not be read says nothing", Facts{Kind: "updated by the CLI", Bound: b, Learned: "1", OnA: "", ReadErr: "reading node1's table kept failing: connection refused"},
			"", "updated by the CLI: reading node1's table kept failing: connection refused"},
		{"no mesh", Facts{Kind: "updated by the CLI", MeshBefore: "node1->node2 (last_status=CONN)"}, "", "updated by the CLI: before the update: node1->node2 (last_status=CONN)"},
		{"write refused on A", Facts{Kind: "updated by the CLI", WriteErr: "writing on A: set table refused: Unknown table"}, "", "updated by the CLI: writing on A: set table refused: Unknown table"},
		{"B lost the key on its restart: another property", Facts{Kind: "updated after B resynced from A", Before: "restart", Learned: "1", Kept: ""},
			"", `updated after B resynced from A: B held gpc0="" after its restart, not A's 1 (a loss conf-reload-keeps-entries judges)`},
		{"the restart failed", Facts{Kind: "updated after B resynced from A", Before: "restart", Learned: "1", BeforeErr: "restarting B: timeout"}, "", "updated after B resynced from A: restarting B: timeout"},
		{"B's update did not hold on B", Facts{Kind: "updated by traffic", Learned: "1", OnA: "1", OnB: "1"}, "", `updated by traffic: B's own update did not hold on B (gpc0="1"): A had nothing to learn`},
	} {
		v, u := Judge(c.f)
		if v != c.violation || u != c.unmet {
			t.Errorf("%s:\n got  %q, %q\n want %q, %q", c.name, v, u, c.violation, c.unmet)
		}
	}
}

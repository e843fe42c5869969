package judge

import (
	"strings"
	"testing"
	"time"

	"github.com/harp-project/harp/harness/core/obs"
	"github.com/harp-project/harp/harness/core/verdict"
)

func TestJudge(t *testing.T) {
	b := 5 * time.Second
	v := func(s string) obs.Optional[string] { return obs.Opt(obs.Value(s)) }
	unread := obs.Opt(obs.Failure[string]("show table cluster/tbl: connection refused"))
	for _, c := range []struct {
		name             string
		f                Facts
		violation, unmet string
		want             verdict.Verdict
	}{
		{"B's update reaches A: held", Facts{Kind: "updated by the CLI", Bound: b, Learned: v("1"), OnA: v("2"), OnB: v("2")}, "", "", verdict.Pass},
		{"B's update never reaches A", Facts{Kind: "updated by traffic", Bound: b, Learned: v("1"), OnA: v("1"), OnB: v("2")},
			`updated by traffic: B's update (gpc0 2) did not reach A within 5s (A holds gpc0="1")`, "", verdict.Reproduced},
		{"after a reload B's update never reaches A", Facts{Kind: "updated after B was reloaded", Before: "reload", Bound: b, Learned: v("1"), Kept: v("1"), OnA: v("1"), OnB: v("2")},
			`updated after B was reloaded: B's update (gpc0 2) did not reach A within 5s (A holds gpc0="1")`, "", verdict.Reproduced},
		{"A's write never reaches B", Facts{Kind: "updated by the CLI", Bound: b, Learned: v("")}, "updated by the CLI: A's write never reached B within 5s", "", verdict.Reproduced},
		{"B learnt other data", Facts{Kind: "updated by the CLI", Bound: b, Learned: v("3")}, "updated by the CLI: B learnt gpc0=3 from A's write of 1", "", verdict.Reproduced},
		{"no mesh", Facts{Kind: "updated by the CLI", MeshBefore: "node1->node2 (last_status=CONN)"}, "", "updated by the CLI: before the update: node1->node2 (last_status=CONN)", verdict.Inconclusive},
		{"write refused on A", Facts{Kind: "updated by the CLI", WriteErr: "writing on A: set table refused: Unknown table"}, "", "updated by the CLI: writing on A: set table refused: Unknown table", verdict.Inconclusive},
		{"B lost the key on its restart: another property", Facts{Kind: "updated after B resynced from A", Before: "restart", Learned: v("1"), Kept: v("")},
			"", `updated after B resynced from A: B held gpc0="" after its restart, not A's 1 (a loss conf-reload-keeps-entries judges)`, verdict.Inconclusive},
		{"the restart failed", Facts{Kind: "updated after B resynced from A", Before: "restart", Learned: v("1"), BeforeErr: "restarting B: timeout"}, "", "updated after B resynced from A: restarting B: timeout", verdict.Inconclusive},
		{"B's update did not hold on B", Facts{Kind: "updated by traffic", Learned: v("1"), OnA: v("1"), OnB: v("1")}, "", `updated by traffic: B's own update did not hold on B (gpc0="1"): A had nothing to learn`, verdict.Inconclusive},
		// Harness faults: a table harp could not read is unknown, never an
		// absent key (today only the reading's own flag kept it from one).
		{"A's table unread after B's update", Facts{Kind: "updated by the CLI", Bound: b, Learned: v("1"), OnA: unread, OnB: v("2")}, "", "", verdict.Inconclusive},
		{"B's table unread after A's write: not a write that never arrived", Facts{Kind: "updated by the CLI", Bound: b, Learned: unread}, "", "", verdict.Inconclusive},
		{"B's table unread after its restart: not a loss", Facts{Kind: "updated after B resynced from A", Before: "restart", Bound: b, Learned: v("1"), Kept: unread}, "", "", verdict.Inconclusive},
	} {
		_, v, u := Update(c.f)
		if v != c.violation || u != c.unmet {
			t.Errorf("%s:\n got  %q, %q\n want %q, %q", c.name, v, u, c.violation, c.unmet)
		}
		tr := verdict.Trial{N: 1, Violation: v, Unmet: u, Evidence: &c.f}
		if got, _, reason := verdict.Decide(verdict.Outcome{Trials: []verdict.Trial{tr}}, "updates"); got != c.want {
			t.Errorf("%s: %s (%s), want %s", c.name, got, reason, c.want)
		}
	}
}

// Each direction is its own check, qualified by the kind: a build that
// never pushes a learnt entry back fails pushed-back alone, and an update
// that never got that far lists no pushed-back at all.
func TestChecks(t *testing.T) {
	b := 5 * time.Second
	v := func(s string) obs.Optional[string] { return obs.Opt(obs.Value(s)) }
	ids := func(cs verdict.Checks) (out []string) {
		for _, c := range cs {
			s := "held"
			if !c.Held {
				s = "failed"
			}
			out = append(out, c.ID+" "+s)
		}
		return out
	}
	for _, c := range []struct {
		name string
		f    Facts
		want []string
	}{
		{"both ways", Facts{Kind: "updated by the CLI", KindID: "cli", Bound: b, Learned: v("1"), OnA: v("2"), OnB: v("2")}, []string{"reaches-b.cli held", "pushed-back.cli held"}},
		{"not pushed back after a reload", Facts{Kind: "updated after B was reloaded", KindID: "reload", Before: "reload", Bound: b, Learned: v("1"), Kept: v("1"), OnA: v("1"), OnB: v("2")},
			[]string{"reaches-b.reload held", "pushed-back.reload failed"}},
		{"never reached B", Facts{Kind: "updated by traffic", KindID: "traffic", Bound: b, Learned: v("")}, []string{"reaches-b.traffic failed"}},
		{"B lost it on restart: no pushed-back", Facts{Kind: "updated after B resynced from A", KindID: "restart", Before: "restart", Learned: v("1"), Kept: v("")}, []string{"reaches-b.restart held"}},
		{"no mesh: nothing", Facts{Kind: "updated by the CLI", KindID: "cli", MeshBefore: "node1->node2 (last_status=CONN)"}, nil},
	} {
		cs, _, _ := Update(c.f)
		if got := ids(cs); strings.Join(got, ", ") != strings.Join(c.want, ", ") {
			t.Errorf("%s: checks %v, want %v", c.name, got, c.want)
		}
	}
}

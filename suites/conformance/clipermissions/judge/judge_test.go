package judge

import (
	"testing"

	"github.com/harp-project/harp/harness/core/verdict"
)

func TestJudge(t *testing.T) {
	same := ""
	to := func(s string) string { return s }
	unread := "before: [k v0]; after: unknown: show map: EOF"
	refusedMaxconn := Call{Command: "set maxconn frontend web 10", Level: "admin", Answer: "Permission denied", Refused: true, Changed: same}
	for _, c := range []struct {
		name             string
		f                Facts
		violation, unmet string
		want             verdict.Verdict
	}{
		{"every command refused, nothing changed: held", Facts{Socket: "operator", Changes: []Call{refusedMaxconn}}, "", "", verdict.Pass},
		{"accepted and changed: a security violation", Facts{Socket: "user", Changes: []Call{{Command: "add map /etc/harp/m.map k v", Level: "operator", Changed: to("[k v0] -> [k v0, k v]")}}},
			`user socket: SECURITY: "add map /etc/harp/m.map k v" (documented operator) accepted on the user socket and changed [k v0] -> [k v0, k v]`, "", verdict.Reproduced},
		{"refused but changed (an entry created anyway)", Facts{Socket: "user", Changes: []Call{{Command: "set table tbl key harp-new data.gpc0 1", Level: "operator", Answer: "Permission denied", Refused: true,
			Changed: to("[harp-key gpc0=5] -> [harp-key gpc0=5, harp-new gpc0=0]")}}},
			`user socket: SECURITY: "set table tbl key harp-new data.gpc0 1" (documented operator) refused on the user socket ("Permission denied") but changed [harp-key gpc0=5] -> [harp-key gpc0=5, harp-new gpc0=0]`, "", verdict.Reproduced},
		{"a silent success that changed nothing", Facts{Socket: "user", Changes: []Call{{Command: "clear table tbl", Level: "operator", Changed: same}}},
			`user socket: "clear table tbl" (documented operator) answered as a success on the user socket, though it changed nothing`, "", verdict.Reproduced},
		{"a documented read refused at its level", Facts{Socket: "reads", Reads: []Call{{Command: "show sess", Level: "operator", Answer: "Permission denied", Refused: true}}},
			`reads socket: "show sess" refused at its documented level operator ("Permission denied")`, "", verdict.Reproduced},
		{"a read that killed the worker", Facts{Socket: "reads", Reads: []Call{{Command: "show errors", Level: "operator", Failed: "no answer"}, {Command: "show env", Level: "operator", Err: "connection refused"}}},
			`reads socket: "show errors" got no answer at its documented level operator (no answer)`, "", verdict.Reproduced},
		{"a read harp could not send says nothing", Facts{Socket: "reads", Reads: []Call{{Command: "show env", Level: "operator", Err: "connection refused"}}},
			"", `reads socket: "show env" could not be sent: connection refused`, verdict.Inconclusive},
		{"setup failed", Facts{Socket: "user", Setup: "set table refused"}, "", "user socket: set table refused", verdict.Inconclusive},
		// Harness faults: a state harp could not read (today an ERROR that
		// ended the trial) is unknown; the other commands are still judged.
		{"a state not read, the others held", Facts{Socket: "user", Changes: []Call{{Command: "add map /etc/harp/m.map k v", Level: "operator", Unread: unread}, refusedMaxconn}}, "",
			`user socket: the state 1 command(s) would change could not be read: "add map /etc/harp/m.map k v" (before: [k v0]; after: unknown: show map: EOF)`, verdict.Inconclusive},
		// Each command is its own check: one unread state hides no
		// security finding of another.
		{"a state not read, another command changed state", Facts{Socket: "user", Changes: []Call{{Command: "add map /etc/harp/m.map k v", Level: "operator", Unread: unread},
			{Command: "del acl /etc/harp/a.acl 192.0.2.9", Level: "operator", Changed: to("[192.0.2.9] -> []")}}},
			`user socket: SECURITY: "del acl /etc/harp/a.acl 192.0.2.9" (documented operator) accepted on the user socket and changed [192.0.2.9] -> []`, "", verdict.Reproduced},
		{"a later command's precondition failed: the security finding before it stands", Facts{Socket: "user", Setup: "the held session was gone before `shutdown session`: it could not be checked",
			Changes: []Call{{Command: "add map /etc/harp/m.map k v", Level: "operator", Changed: to("[k v0] -> [k v0, k v]")}}},
			`user socket: SECURITY: "add map /etc/harp/m.map k v" (documented operator) accepted on the user socket and changed [k v0] -> [k v0, k v]`, "", verdict.Reproduced},
	} {
		_, v, u := SocketChecks(c.f)
		if v != c.violation || u != c.unmet {
			t.Errorf("%s:\n got  %q, %q\n want %q, %q", c.name, v, u, c.violation, c.unmet)
		}
		tr := verdict.Trial{N: 1, Violation: v, Unmet: u, Evidence: &Evidence{Facts: c.f}}
		if got, _, reason := verdict.Decide(verdict.Outcome{Trials: []verdict.Trial{tr}}, "sockets"); got != c.want {
			t.Errorf("%s: %s (%s), want %s", c.name, got, reason, c.want)
		}
	}
}

// A finding's signature is the socket, the command's verb and object and
// what failed: a refusal that still changed state is not the same bug as
// a command accepted above its level.
func TestJudgeCheckIDs(t *testing.T) {
	f := Facts{Socket: "user", Changes: []Call{
		{Command: "set table tbl key k1 data.gpc0 1", Level: "operator", Answer: "Permission denied", Refused: true, Changed: "absent -> gpc0=1"},
		{Command: "add map /etc/m.map a b", Level: "operator", Answer: "", Changed: "0 -> 1 entries"},
		{Command: "clear acl #0", Level: "operator", Answer: "Permission denied", Refused: true},
	}}
	cs, _, _ := SocketChecks(f)
	got := map[string]bool{}
	for _, c := range cs {
		got[c.ID] = c.Held
	}
	want := map[string]bool{
		"user.set-table.refusal-changes-nothing": false,
		"user.add-map.level-enforced":            false,
		"user.clear-acl.level-enforced":          true,
		"user.clear-acl.refusal-changes-nothing": true,
	}
	for id, held := range want {
		if h, ok := got[id]; !ok || h != held {
			t.Errorf("check %s: listed %v held %v, want held %v (all: %+v)", id, ok, h, held, cs)
		}
	}
}

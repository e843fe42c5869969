package reloads

import "testing"

func TestJudge(t *testing.T) {
	for _, c := range []struct {
		name             string
		f                Facts
		violation, unmet string
	}{
		{"every key kept: held", Facts{How: "all at once", Keys: 50}, "", ""},
		{"keys lost", Facts{How: "all at once", Keys: 50, StillMissing: map[string][]string{"node2": {"pre-001", "pre-002"}, "node3": {"pre-001"}}},
			"after reloading all at once, 2 of 50 keys written before are not on every node (node2 lacks 2, node3 lacks 1)", ""},
		{"a failed reload is not HAProxy losing keys", Facts{How: "one after another", Keys: 50, Problems: []string{"node2: no new worker after SIGUSR2"},
			StillMissing: map[string][]string{"node2": {"pre-001"}}}, "", "reloads one after another: node2: no new worker after SIGUSR2"},
		{"no mesh after the reloads", Facts{How: "all at once", Keys: 50, MeshAfter: "node1->node3 (last_status=CONN)"}, "", "after the reloads: node1->node3 (last_status=CONN)"},
		{"wrong data", Facts{How: "all at once", Keys: 50, WrongData: "1 replicated entries hold other data"}, "1 replicated entries hold other data", ""},
	} {
		v, u := Judge(c.f)
		if v != c.violation || u != c.unmet {
			t.Errorf("%s:\n got  %q, %q\n want %q, %q", c.name, v, u, c.violation, c.unmet)
		}
	}
	if u := unmetBefore(map[string][]string{"node3": {"pre-001"}}, 50); u == "" {
		t.Error("a key missing before the round was not an unmet precondition")
	}
}

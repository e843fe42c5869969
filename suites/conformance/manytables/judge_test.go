package manytables

import (
	"testing"
	"time"
)

func TestJudge(t *testing.T) {
	b := 60 * time.Second
	for _, c := range []struct {
		name             string
		f                Facts
		violation, unmet string
	}{
		{"held", Facts{Kind: "a reload teaches", Tables: 300, Entries: 100, Bound: b}, "", ""},
		{"entries of the last tables missing", Facts{Kind: "a fresh node learns", Tables: 300, Entries: 100, Bound: b,
			Missing: map[string]int{"cluster/t0300": 10, "cluster/t0299": 10, "cluster/t0298": 10, "cluster/t0297": 10, "cluster/t0296": 10, "cluster/t0295": 10}},
			"a fresh node learns: 60 of 100 entries missing or wrong after 1m0s (t0295 10, t0296 10, t0297 10, t0298 10, t0299 10, and 1 more tables)", ""},
		{"resync never finished", Facts{Kind: "a reload teaches", Tables: 300, Entries: 100, Bound: b, Resync: "initial resync of section cluster never finished (flags=0x1 after 1m0s)"},
			"a reload teaches: initial resync of section cluster never finished (flags=0x1 after 1m0s)", ""},
		{"no initial mesh", Facts{Kind: "initial resync", Tables: 300, Entries: 100, Bound: b, Mesh: "node1: initial resync not finished"},
			"initial resync: with 300 tables the nodes did not mesh and finish their initial resync within 1m0s: node1: initial resync not finished", ""},
		{"setup failed", Facts{Kind: "a reload teaches", Setup: "reloading A: no new worker"}, "", "a reload teaches: reloading A: no new worker"},
	} {
		v, u := Judge(c.f)
		if v != c.violation || u != c.unmet {
			t.Errorf("%s:\n got  %q, %q\n want %q, %q", c.name, v, u, c.violation, c.unmet)
		}
	}
}

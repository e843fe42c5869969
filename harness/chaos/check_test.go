package chaos

import (
	"strings"
	"testing"
	"time"
)

// A history built by hand: three nodes, key a owned by node1, key b by
// node2; the main table expires in 10 min, "short" in 5 s.
func history() History {
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	h := History{Seed: 1, Nodes: []string{"node1", "node2", "node3"}, Main: "tbl",
		Owners: map[string]string{"a": "node1", "b": "node2"},
		Tables: map[string]int64{"tbl": 600000, "short": 5000},
		Ops: []Op{
			{ID: 1, Kind: SetCLI, Node: "node1", Table: "tbl", Key: "a", Value: 7, Start: at(1), End: at(1.01), OK: true},
			{ID: 2, Kind: IncHTTP, Node: "node1", Table: "tbl", Key: "a", Start: at(2), End: at(2.01), OK: true},
			{ID: 3, Kind: IncHTTP, Node: "node2", Table: "tbl", Key: "b", Start: at(2), End: at(2.01), OK: true},
			{ID: 4, Kind: IncHTTP, Node: "node2", Table: "tbl", Key: "b", Start: at(3), End: at(8), Err: "timeout"},
			{ID: 5, Kind: SetCLI, Node: "node3", Table: "short", Key: "s", Value: 1, Start: at(1), End: at(1.01), OK: true},
			{ID: 6, Kind: Reload, Node: "node3", Start: at(4), End: at(5), OK: true, Before: []string{"a", "b"}, After: []string{"a", "b"}},
		},
		FinalAt: at(20),
	}
	h.Final = map[string]map[string]map[string]Entry{}
	for _, n := range h.Nodes {
		h.Final[n] = map[string]map[string]Entry{"tbl": {"a": {GPC0: 8, ExpMS: 590000}, "b": {GPC0: 2, ExpMS: 590000}}}
	}
	return h
}

func TestCheck(t *testing.T) {
	for _, c := range []struct {
		name    string
		change  func(*History)
		verdict string
		reason  string
	}{
		{"the model held (b's timed-out inc counted: 2 is possible)", func(h *History) {}, "PASS", "2 keys on 3 nodes converged"},
		{"b's timed-out inc not counted: 1 is possible too", func(h *History) {
			for _, n := range h.Nodes {
				h.Final[n]["tbl"]["b"] = Entry{GPC0: 1, ExpMS: 590000}
			}
		}, "PASS", ""},
		{"a node kept an older value", func(h *History) { h.Final["node3"]["tbl"]["a"] = Entry{GPC0: 7, ExpMS: 590000} },
			"REPRODUCED", "tbl/a: diverged after healing and the quiet period: node1=8 node2=8 node3=7"},
		{"a key missing on one node", func(h *History) { delete(h.Final["node2"]["tbl"], "a") },
			"REPRODUCED", "node2=missing"},
		{"a value no order of writes leaves", func(h *History) {
			for _, n := range h.Nodes {
				h.Final[n]["tbl"]["a"] = Entry{GPC0: 9, ExpMS: 590000}
			}
		}, "REPRODUCED", "every node holds gpc0=9, which the owner's writes in order cannot leave (possible: 8)"},
		{"a key nobody wrote", func(h *History) { h.Final["node1"]["tbl"]["z"] = Entry{GPC0: 1} }, "REPRODUCED", "tbl/z: on node1, but no write produced it"},
		{"a reload lost a key", func(h *History) { h.Ops[5].After = []string{"a"} }, "REPRODUCED", "tbl/b: held by node3 before its reload (op 6, resync finished) and not by its new worker"},
		{"a reload whose resync never finished proves nothing", func(h *History) { h.Ops[5].After, h.Ops[5].Unmet = []string{"a"}, "resync unfinished" }, "PASS", ""},
		{"an entry outlived its expire", func(h *History) { h.Final["node2"]["short"] = map[string]Entry{"s": {GPC0: 1, ExpMS: 100}} },
			"REPRODUCED", "short/s: on node2 19s after its last write: it outlived the table's expire of 5s"},
		{"an expiry beyond the table's", func(h *History) { h.Final["node1"]["tbl"]["a"] = Entry{GPC0: 8, ExpMS: 3600000} },
			"REPRODUCED", "tbl/a: on node1: 1h0m0s left, beyond the table's expire of 10m0s"},
		{"an unreadable node is inconclusive", func(h *History) { h.Unreadable = map[string]string{"node2": "i/o timeout"} },
			"INCONCLUSIVE", "the final tables of node2 (i/o timeout) could not be read"},
		{"most traffic writes failed: the workload did not do its work", func(h *History) {
			for i := 0; i < 30; i++ {
				h.Ops = append(h.Ops, Op{ID: 100 + i, Kind: IncHTTP, Node: "node2", Table: "tbl", Key: "b", Start: h.FinalAt, End: h.FinalAt, OK: i < 5, Err: "connection refused"})
			}
		}, "INCONCLUSIVE", "only 7 of 33 traffic writes succeeded: the workload mostly failed"},
		{"no write succeeded", func(h *History) {
			for i := range h.Ops {
				h.Ops[i].OK = false
			}
		}, "INCONCLUSIVE", "no write succeeded"},
	} {
		h := history()
		c.change(&h)
		r := Check(h)
		if r.Verdict != c.verdict || !strings.Contains(r.Reason+" "+whats(r), c.reason) {
			t.Errorf("%s: %s (%s) %v", c.name, r.Verdict, r.Reason, r.Violations)
		}
		if r.Verdict == "REPRODUCED" && len(r.Violations[0].Ops) == 0 && !strings.Contains(c.reason, "tbl/z") {
			t.Errorf("%s: the violation names no operation", c.name)
		}
	}
}

func whats(r Result) string {
	var s []string
	for _, v := range r.Violations {
		s = append(s, v.Key+": "+v.What)
	}
	return strings.Join(s, "; ")
}

func TestSaveLoad(t *testing.T) {
	h := history()
	path := t.TempDir() + "/history.json"
	if err := h.Save(path); err != nil {
		t.Fatal(err)
	}
	back, err := Load(path)
	if err != nil || Check(back).Verdict != "PASS" || len(back.Ops) != len(h.Ops) {
		t.Fatalf("load: %v %+v", err, Check(back))
	}
}

func TestParseFaults(t *testing.T) {
	if f, err := ParseFaults("all"); f != nil || err != nil {
		t.Errorf("all: %v %v", f, err)
	}
	if f, err := ParseFaults("latency, restart"); err != nil || strings.Join(f, " ") != "latency restart" {
		t.Errorf("two kinds: %v %v", f, err)
	}
	if _, err := ParseFaults("latency,flood"); err == nil || !strings.Contains(err.Error(), `unknown fault "flood"`) {
		t.Errorf("an unknown kind: %v", err)
	}
}

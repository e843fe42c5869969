package partition

import "testing"

func TestJudge(t *testing.T) {
	ok := Facts{Cut: "node3", SawCut: true, Keys: 40}
	for _, c := range []struct {
		name             string
		edit             func(f *Facts)
		violation, unmet string
	}{
		{"reconverged: held", func(f *Facts) {}, "", ""},
		{"keys missing with every link up: the violation", func(f *Facts) {
			f.StillMissing = map[string][]string{"node1": {"p1-c000"}, "node2": {"p1-c000", "p1-c001"}}
		},
			"2 of 40 keys not on every node 30s after the heal, with every link up (node1 lacks 1, node2 lacks 2)", ""},
		{"links that never came back are the network's", func(f *Facts) {
			f.LinksBack = "the cluster never meshed and synced within 30s: node1->node3 (last_status=CONN) (network probe: Docker shows node3 off the cluster network)"
			f.StillMissing = map[string][]string{"node1": {"p1-c000"}}
		}, "", "after the heal: the cluster never meshed and synced within 30s: node1->node3 (last_status=CONN) (network probe: Docker shows node3 off the cluster network)"},
		{"a cut the doctor never saw", func(f *Facts) { f.SawCut = false }, "", "the cut did not take: harp doctor still saw the links to node3 up 20s after it"},
		{"keys that crossed the cut", func(f *Facts) { f.Leaked = 3 }, "", "the cut did not take: 3 keys written on node3 during the cut reached the other side"},
		{"no mesh before the cut", func(f *Facts) { f.MeshBefore = "node1->node3 (last_status=CONN)" }, "", "before the cut: node1->node3 (last_status=CONN)"},
	} {
		f := ok
		c.edit(&f)
		v, u := Judge(f)
		if v != c.violation || u != c.unmet {
			t.Errorf("%s:\n got  %q, %q\n want %q, %q", c.name, v, u, c.violation, c.unmet)
		}
	}
}

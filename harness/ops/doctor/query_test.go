package doctor

import (
	"slices"
	"testing"
)

func TestCodesAndLinkDownTo(t *testing.T) {
	if cs := (Diagnosis{}).Codes(); cs != nil {
		t.Errorf("Codes of no finding: %v, want nil", cs)
	}
	d := Diagnosis{
		Findings: []Finding{{Code: LinkDown}, {Code: Divergence}},
		Links:    []Link{{From: "node1", Peer: "node3"}, {From: "node2", Peer: "node1", Established: true}},
	}
	if cs := d.Codes(); !slices.Equal(cs, []Code{LinkDown, Divergence}) {
		t.Errorf("Codes: %v", cs)
	}
	for name, want := range map[string]bool{"node1": true, "node3": true, "node2": false} {
		if got := d.LinkDownTo(name); got != want {
			t.Errorf("LinkDownTo(%s): %v, want %v", name, got, want)
		}
	}
}

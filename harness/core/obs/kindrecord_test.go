package obs

import (
	"encoding/json"
	"testing"
)

// The evidence reads as the suites' own did before it moved here: the
// kind, then the facts with the kind and the Record's fields beside it.
func TestKindEvidenceJSON(t *testing.T) {
	ev := KindEvidence{Kind: "huge expiry", Facts: KindRecord{Kind: "huge expiry", Record: Record{Violations: []string{"v"}}}}
	ev.Facts.NotRead("show peers: %s", "timeout")
	b, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"kind":"huge expiry","facts":{"kind":"huge expiry","violations":["v"],"unread":{"state":"failed","why":"show peers: timeout"}}}`
	if string(b) != want {
		t.Errorf("JSON:\n got  %s\n want %s", b, want)
	}
	if v, u := ev.Facts.Decide(ev.Facts.Kind); v != "huge expiry: v" || u != "" {
		t.Errorf("Decide: %q, %q", v, u)
	}
	if got := Unknowns(ev); len(got) != 1 || got[0] != "facts.unread: show peers: timeout" {
		t.Errorf("Unknowns: %q", got)
	}
}

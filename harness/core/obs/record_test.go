package obs

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestRecordDecide(t *testing.T) {
	for _, c := range []struct {
		name             string
		r                Record
		violation, unmet string
	}{
		{"held", Record{Observed: []string{"ok"}}, "", ""},
		{"every violation is named", Record{Violations: []string{"a", "b"}}, "k: a; b", ""},
		{"an unmet precondition outweighs what was seen", Record{Unmet: "u", Violations: []string{"a"}}, "", "k: u"},
	} {
		if v, u := c.r.Decide("k"); v != c.violation || u != c.unmet {
			t.Errorf("%s: got %q, %q", c.name, v, u)
		}
	}
}

func TestRecordNotes(t *testing.T) {
	var r Record
	r.Held("h %d", 1)
	r.Violated("v %d", 2)
	r.NotRead("first %d", 3)
	r.NotRead("second")
	if got := r.Seen(); !reflect.DeepEqual(got, []string{"h 1", "v 2"}) {
		t.Errorf("Seen: %q", got)
	}
	if r.Unread.Why != "first 3" {
		t.Errorf("Unread: %+v", r.Unread)
	}
}

// Embedded, a Record's fields read as the outer struct's: in JSON and in
// the paths Unknowns gives.
func TestRecordEmbedded(t *testing.T) {
	type facts struct {
		Kind string `json:"kind"`
		Record
	}
	f := facts{Kind: "k"}
	f.Violated("v")
	f.NotRead("no answer")
	b, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"kind", "violations", "unread"} {
		if _, ok := m[k]; !ok {
			t.Errorf("no %q in %s", k, b)
		}
	}
	if u := Unknowns(struct {
		F facts `json:"facts"`
	}{f}); len(u) != 1 || u[0] != "facts.unread: no answer" {
		t.Errorf("Unknowns: %q", u)
	}
}

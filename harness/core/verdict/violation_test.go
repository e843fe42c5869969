package verdict

import "testing"

func TestChecksViolation(t *testing.T) {
	var cs Checks
	cs.Hold("a")
	if v := cs.Violation("x"); v != "" {
		t.Errorf("none failed: %q", v)
	}
	cs.Fail("b", "b failed")
	cs.Expect("c", false, "c failed")
	if v, want := cs.Violation("x, y"), "x, y: b failed; c failed"; v != want {
		t.Errorf("got %q, want %q", v, want)
	}
}

// A kind's trial is one check named by the kind: failed with the
// violation, held without one, and absent when unmet (a trial that could
// not check says nothing of it); tallied, the unmet trial counts nowhere.
func TestKindCheck(t *testing.T) {
	v := "huge expiry: a timed update with expire 2147483647 ms outlived the table's 10s"
	if got := KindCheck("huge expiry", v, ""); len(got) != 1 || got[0].ID != "huge-expiry" || got[0].Held || got[0].Text != v {
		t.Errorf("violated: %+v", got)
	}
	if got := KindCheck("frontend maxconn 0 and back", "", ""); len(got) != 1 || got[0].ID != "frontend-maxconn-0-and-back" || !got[0].Held {
		t.Errorf("held: %+v", got)
	}
	if got := KindCheck("huge expiry", "", "the mesh never formed"); got != nil {
		t.Errorf("unmet: %+v", got)
	}
	ts := []Trial{
		{N: 1, Violation: v, Checks: KindCheck("huge expiry", v, "")},
		{N: 2, Checks: KindCheck("huge expiry", "", "")},
		{N: 3, Unmet: "no mesh", Checks: KindCheck("huge expiry", "", "no mesh")},
	}
	if got := TallyChecks(ts); len(got) != 1 || got[0].Failed != 1 || got[0].Held != 1 {
		t.Errorf("tally: %+v", got)
	}
}

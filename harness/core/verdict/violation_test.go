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

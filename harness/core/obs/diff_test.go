package obs

import "testing"

func TestDiff(t *testing.T) {
	for _, c := range []struct {
		before, after   Of[string]
		changed, unread string
	}{
		{Value("[a]"), Value("[a]"), "", ""},
		{Value("[a]"), Value("[]"), "[a] -> []", ""},
		{Value("[a]"), Failure[string]("timeout"), "", "before: [a]; after: unknown: timeout"},
		{Refusal[string]("Permission denied"), Value("x"), "", "before: unknown: Permission denied; after: x"},
	} {
		ch, un := Diff(c.before, c.after)
		if ch != c.changed || un != c.unread {
			t.Errorf("Diff(%v, %v) = %q, %q; want %q, %q", c.before, c.after, ch, un, c.changed, c.unread)
		}
	}
}

package node

import (
	"errors"
	"testing"
)

// What followed an earlier read, and unknown (never all of it) once the
// output was rotated or cut: earlier lines would pass for this round's.
func TestLogsAfter(t *testing.T) {
	for _, c := range []struct {
		logs, before, want string
		err                error
	}{
		{"a\nb\nc\n", "a\n", "b\nc\n", nil},
		{"a\nb", "a\nb", "", nil},
		{"a\nbc\n", "a\nb", "c\n", nil}, // read mid-line
		{"x\nb\nc\n", "a\n", "", ErrLogsRewritten},
		{"a", "a\nb\n", "", ErrLogsRewritten},
	} {
		got, err := logsAfter(c.logs, c.before)
		if got != c.want || !errors.Is(err, c.err) {
			t.Errorf("logsAfter(%q, %q) = %q, %v; want %q, %v", c.logs, c.before, got, err, c.want, c.err)
		}
	}
}

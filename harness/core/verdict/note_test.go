package verdict

import (
	"slices"
	"testing"
)

func TestNote(t *testing.T) {
	var a, b Trial
	a.Notef("%s", "one %d")
	a.Notef("%s", "two")
	b.Note("one %d", "two")
	b.Note()
	if !slices.Equal(a.Notes, b.Notes) {
		t.Errorf("Note = %q, Notef = %q", b.Notes, a.Notes)
	}
}

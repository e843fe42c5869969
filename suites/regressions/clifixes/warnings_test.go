package clifixes

import (
	"slices"
	"testing"
)

// Docker's log of 3.0-dev3-598c7f164 (2026-12-06): the chained commands'
// warning has no line feed, so the marker's message follows it on the
// same line.
func TestWarnings(t *testing.T) {
	out := "[NOTICE]   (1) : Loading success.\n" +
		"[WARNING]  (9) : Commands sent to the CLI were chained using a new line character while in non-interactive mode. This is not reliable, not officially supported and will not be supported anymore in future versions. Please use ';' to delimit commands instead.[WARNING]  (9) : "
	got := warnings(out)
	want := []string{"Commands sent to the CLI were chained using a new line character while in non-interactive mode. This is not reliable, not officially supported and will not be supported anymore in future versions. Please use ';' to delimit commands instead."}
	if !slices.Equal(got, want) {
		t.Errorf("warnings = %q", got)
	}
	if got := warnings("[NOTICE]   (1) : New worker (9) forked\n[WARNING]  (9) : "); len(got) != 0 {
		t.Errorf("only the marker's tag: %q", got)
	}
}

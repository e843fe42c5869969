package text

import (
	"slices"
	"testing"
)

func TestNumbered(t *testing.T) {
	if got := Numbered("s%d/t", 3); !slices.Equal(got, []string{"s1/t", "s2/t", "s3/t"}) {
		t.Errorf("Numbered = %q", got)
	}
	if got := Numbered("s%d", 0); len(got) != 0 {
		t.Errorf("Numbered(0) = %q", got)
	}
}

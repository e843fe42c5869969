package judge

import (
	"slices"
	"testing"
)

func TestTableLossTexts(t *testing.T) {
	l := TableLoss{Lost: map[string]int{"s2/t": 100, "s1/t": 40}, Wrong: map[string]int{"s1/t": 2}}
	if got := l.Bad(); got != 142 {
		t.Errorf("Bad = %d, want 142", got)
	}
	want := []string{"140 of 300 entries lost (s1/t 40, s2/t 100)", "2 of 300 entries hold other data (s1/t 2)"}
	if got := l.Texts(300); !slices.Equal(got, want) {
		t.Errorf("Texts = %q, want %q", got, want)
	}
	if got := (TableLoss{Lost: map[string]int{}}).Texts(100); got != nil || (TableLoss{}).Bad() != 0 {
		t.Errorf("nothing lost: %q", got)
	}
	if got := (TableLoss{Wrong: map[string]int{"s1/t": 1}}).Texts(100); !slices.Equal(got, []string{"1 of 100 entries hold other data (s1/t 1)"}) {
		t.Errorf("only changed: %q", got)
	}
}

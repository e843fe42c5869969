package obs

import (
	"errors"
	"testing"
)

// Map keeps the state and reason, and maps only a value seen.
func TestMap(t *testing.T) {
	double := func(n int) int { return 2 * n }
	for _, c := range []struct {
		in, want Of[int]
	}{
		{Value(21), Value(42)},
		{From(3, errors.New("EOF")), From(6, errors.New("EOF"))},
		{Refusal[int]("Unknown command"), Refusal[int]("Unknown command")},
		{Of[int]{}, Of[int]{}},
	} {
		if got := Map(c.in, double); got != c.want {
			t.Errorf("Map(%+v) = %+v, want %+v", c.in, got, c.want)
		}
	}
}

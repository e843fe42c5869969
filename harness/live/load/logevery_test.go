package load

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

func TestLogEvery(t *testing.T) {
	var got []string
	p := LogEvery(5, "attack", func(f string, a ...any) { got = append(got, fmt.Sprintf(f, a...)) })
	for s := 1; s <= 10; s++ {
		p(uint64(100*s), time.Duration(s)*time.Second+3*time.Millisecond)
	}
	if want := []string{"  attack 5s: 500 responses so far", "  attack 10s: 1000 responses so far"}; !slices.Equal(got, want) {
		t.Errorf("%q", got)
	}
}

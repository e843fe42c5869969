package suiteenv

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/harp-project/harp/harness/core/verdict"
)

// Rerun discards attempts while again says so, up to tries, and notes them.
func TestRerun(t *testing.T) {
	again := func(u string) bool { return strings.HasPrefix(u, "collision") }
	unmets := []string{"collision: coll 0 -> 1", "collision: coll 1 -> 2", ""}
	calls := 0
	attempt := func() (verdict.Trial, error) {
		calls++
		return verdict.Trial{Unmet: unmets[calls-1], Notes: []string{"own"}}, nil
	}
	tr, err := Rerun(3, again, attempt)
	want := []string{"attempt 1 discarded: collision: coll 0 -> 1", "attempt 2 discarded: collision: coll 1 -> 2", "own"}
	if err != nil || calls != 3 || tr.Unmet != "" || !slices.Equal(tr.Notes, want) {
		t.Errorf("%d calls: %+v %v", calls, tr, err)
	}
	calls = 0
	if tr, _ := Rerun(2, again, attempt); calls != 2 || tr.Unmet != unmets[1] {
		t.Errorf("tries 2: %d calls, unmet %q", calls, tr.Unmet)
	}
	calls = 0
	fail := func() (verdict.Trial, error) { calls++; return verdict.Trial{Unmet: "collision"}, errors.New("EOF") }
	if _, err := Rerun(3, again, fail); err == nil || calls != 1 {
		t.Errorf("an error: %d calls, %v", calls, err)
	}
}

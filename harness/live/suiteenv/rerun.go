package suiteenv

import (
	"fmt"

	"github.com/harp-project/harp/harness/core/verdict"
)

// Rerun runs attempt, at most tries times, while its trial was unmet for a
// reason that again says a fresh attempt may not have (one that was not
// the scenario under test: a collision, a timer that fell badly). The
// trial kept lists the discarded attempts first among its notes
// ("attempt 1 discarded: why"). An error ends it at once.
func Rerun(tries int, again func(unmet string) bool, attempt func() (verdict.Trial, error)) (verdict.Trial, error) {
	var notes []string
	for try := 1; ; try++ {
		t, err := attempt()
		if err != nil || !again(t.Unmet) || try == tries {
			t.Notes = append(notes, t.Notes...)
			return t, err
		}
		notes = append(notes, fmt.Sprintf("attempt %d discarded: %s", try, t.Unmet))
	}
}

// Call: one runtime command timed against a bound, as the judge reads it.
// A worker's CLI that answers late, closes without a byte
// or never answers is evidence of a hung worker, not harp's error; a
// command that never reached the socket says nothing, since HAProxy never
// saw it. The suite's askTimed makes a Call; the judge keeps Calls in its
// facts and reads them with FirstLate and Refused.

package judge

import (
	"fmt"
	"strings"
	"time"

	"github.com/harp-project/harp/harness/core/cliout"
	"github.com/harp-project/harp/harness/core/obs"
)

// NotSent begins the error of a command that never reached the socket
// (even when sent again): HAProxy never saw it, so it says nothing.
const NotSent = "never reached the socket: "

// Call is one runtime command and how it went.
type Call struct {
	Command string        `json:"command"`
	Took    time.Duration `json:"took_ns"`
	Answer  string        `json:"answer,omitempty"`
	Err     string        `json:"error,omitempty"`
	// Control, for a command not answered within the bound: whether the
	// master's CLI answered meanwhile (unknown when harp reached neither).
	Control obs.Optional[bool] `json:"control"`
}

// NotSent says whether the command never reached the socket.
func (c Call) NotSent() bool { return strings.HasPrefix(c.Err, NotSent) }

// Late says whether the command was not answered within bound: no answer
// at all, or one after it.
func (c Call) Late(bound time.Duration) bool { return c.Err != "" || c.Took > bound }

// FirstLate is the first of calls not answered within bound, said as it
// went ("" when every one answered in time), and whether it was answered
// at all: one answered late is slow, not stuck. hang is how long each
// command was waited for.
func FirstLate(calls []Call, bound, hang time.Duration) (what string, answered bool) {
	for _, c := range calls {
		switch {
		case !c.Late(bound):
			continue
		case c.Err == "":
			return fmt.Sprintf("%q answered after %s, beyond %s", c.Command, c.Took.Round(time.Millisecond), bound), true
		case strings.Contains(c.Err, "closed without an answer"):
			// A worker the watchdog kills closes the connection without
			// a byte: no answer either, said as it was.
			return fmt.Sprintf("%q was not answered: the connection closed %s after it was sent", c.Command, c.Took.Round(10*time.Millisecond)), false
		}
		return fmt.Sprintf("%q did not answer within %s (%s)", c.Command, hang, c.Err), false
	}
	return "", false
}

// Slowest is the call that took longest to answer.
func Slowest(calls []Call) Call {
	var s Call
	for _, c := range calls {
		if c.Took > s.Took {
			s = c
		}
	}
	return s
}

// Refused is the first of calls whose answer is not a success
// (cliout.Succeeded: empty or "Done"): the build refused the command or
// its argument, and ok.
func Refused(calls []Call) (refused Call, ok bool) {
	for _, c := range calls {
		if !cliout.Succeeded(c.Answer) {
			return c, true
		}
	}
	return Call{}, false
}

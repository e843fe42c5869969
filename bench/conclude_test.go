package bench

import (
	"fmt"
	"strings"
	"testing"
)

// round is one round of the #3517 script's output as 3.4.7 prints it:
// both tables, then show peers (abridged).
func round(n int, first, second bool) string {
	entry := func(held bool) string {
		if held {
			return "used:1\n0x7f66005a4dc8: key=192.0.2.1 use=0 exp=3598999 shard=0 gpc0=1\n"
		}
		return "used:0\n"
	}
	return fmt.Sprintf("Round %d\n# table: first/marker, type: ip, size:100, %s\n\n# table: second/marker, type: ip, size:100, %s\n\n"+
		"0x7f6600f07400: [19/Feb/1970:17:02:26] id=second disabled=0 flags=0x11000003 resync_timeout=4s task_calls=4\n\n", n, entry(first), entry(second))
}

// What the reporters' scripts conclude from their output.
func TestConclude(t *testing.T) {
	lost := round(1, false, true) + round(2, false, true) + round(3, false, true)
	held := round(1, true, true) + round(2, true, true) + round(3, true, true)
	trial := func(n int, word string) string {
		if word == "SURVIVED" {
			return fmt.Sprintf("%d first handshake b'200\\n'\n%s %d\n", n, word, n)
		}
		return fmt.Sprintf("%d first handshake b'200\\n'\n%s %d 1.21 0x7f7fbb506000: [19/Feb/1970:17:02:27] id=shared\n", n, word, n)
	}
	var survived, closed strings.Builder
	for i := range 5 {
		survived.WriteString(trial(i, "SURVIVED"))
		closed.WriteString(trial(i, map[bool]string{true: "PREMATURE_CLOSE", false: "SURVIVED"}[i%2 == 0]))
	}
	for _, c := range []struct {
		name         string
		conclude     func(string, int) (string, string)
		out          string
		code         int
		verdict, why string
	}{
		{"3517: first/marker gone after every reload (3.4.7)", conclude3517, lost, 0, "REPRODUCED", "a marker lost in 3 of 3 rounds"},
		{"3517: one round lost", conclude3517, round(1, true, true) + round(2, true, false) + round(3, true, true), 0, "REPRODUCED", "a marker lost in 1 of 3 rounds"},
		{"3517: both held every round", conclude3517, held, 0, "PASS", "both markers held in 3 of 3 rounds"},
		{"3517: a table missing from the output is no marker held", conclude3517, round(1, true, true) + round(2, true, true) + "Round 3\n# table: second/marker, type: ip, size:100, used:1\n0x1: key=192.0.2.1 use=0 exp=1 shard=0 gpc0=1\n\n", 0, "REPRODUCED", "a marker lost in 1 of 3 rounds"},
		{"3517: a marker with another value is not the one set", conclude3517, round(1, true, true) + round(2, true, true) + strings.Replace(round(3, true, true), "gpc0=1", "gpc0=0", 1), 0, "REPRODUCED", "a marker lost in 1 of 3 rounds"},
		{"3517: the script failed (no resync)", conclude3517, round(1, true, true) + "Traceback (most recent call last):\nRuntimeError: Peer synchronization did not complete\n", 1, "", "exited 1"},
		{"3517: fewer rounds than three", conclude3517, round(1, true, true) + round(2, true, true), 0, "", "printed 2 of 3 rounds"},
		{"3519: five survived", conclude3519, survived.String(), 0, "PASS", "SURVIVED in 5 of 5 trials"},
		{"3519: premature closes", conclude3519, closed.String(), 0, "REPRODUCED", "PREMATURE_CLOSE in 3 of 5 trials"},
		{"3519: a handshake timed out", conclude3519, trial(0, "SURVIVED") + "Traceback (most recent call last):\nTimeoutError: timed out\n", 1, "", "exited 1 after 1 trials"},
		{"3519: output cut short", conclude3519, trial(0, "SURVIVED"), 0, "", "printed 1 of 5 trials"},
	} {
		v, why := c.conclude(c.out, c.code)
		if v != c.verdict || why != c.why {
			t.Errorf("%s: got %q (%s), want %q (%s)", c.name, v, why, c.verdict, c.why)
		}
	}
}

package verdict

import (
	"errors"
	"testing"
)

func TestDecide(t *testing.T) {
	held := Trial{N: 1}
	lost := Trial{N: 2, Violation: "first/marker lost"}
	unmet := Trial{N: 3, Unmet: "initial resync never finished"}
	cases := []struct {
		name    string
		o       Outcome
		want    Verdict
		violate int
		reason  string
	}{
		{"all held", Outcome{Trials: []Trial{held, held, held}}, Pass, 0, "expected behaviour held in 3 of 3 reloads"},
		{"violations counted", Outcome{Trials: []Trial{lost, lost, held}}, Reproduced, 2, "first/marker lost in 2 of 3 reloads"},
		{"a violation outweighs an unmet precondition", Outcome{Trials: []Trial{lost, unmet}}, Reproduced, 1, "first/marker lost in 1 of 2 reloads; 1 reloads inconclusive"},
		{"unmet precondition is never a pass", Outcome{Trials: []Trial{held, unmet}}, Inconclusive, 0, "reload 3: initial resync never finished"},
		{"run precondition", Outcome{Unmet: "2 CPUs < 16 threads"}, Inconclusive, 0, "2 CPUs < 16 threads"},
		{"no trial is not a pass", Outcome{}, Inconclusive, 0, "no trial ran"},
		{"remarks are counted, not judged", Outcome{Trials: []Trial{held, {N: 2, Remark: "old worker crashed"}}}, Pass, 0, "expected behaviour held in 2 of 2 reloads; also: old worker crashed in 1 of 2 reloads"},
		{"a failed control makes violations inconclusive", Outcome{Trials: []Trial{lost, lost}, ControlFailed: "control closed early in 1 of 2 trials"},
			Inconclusive, 2, "control closed early in 1 of 2 trials; expectation violated in 2 of 2 reloads"},
		{"harness failure", Outcome{Trials: []Trial{lost}, Err: errors.New("docker died")}, Error, 1, "docker died"},
	}
	for _, c := range cases {
		v, n, reason := Decide(c.o, "reloads")
		if v != c.want || n != c.violate || reason != c.reason {
			t.Errorf("%s: got %s %d %q, want %s %d %q", c.name, v, n, reason, c.want, c.violate, c.reason)
		}
	}
}

func TestExitCodes(t *testing.T) {
	for v, code := range map[Verdict]int{Pass: 0, Reproduced: 1, Inconclusive: 2, Error: 3} {
		if v.ExitCode() != code {
			t.Errorf("%s exits %d, want %d", v, v.ExitCode(), code)
		}
	}
	if Worst() != Pass || Worst(Pass, Reproduced, Inconclusive) != Inconclusive || Worst(Error, Pass) != Error {
		t.Error("Worst picks the wrong verdict")
	}
}

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
		// A precondition of the whole run outweighs any violation: its trials prove nothing.
		{"a run precondition is never hidden by a violation", Outcome{Unmet: "2 CPUs < 16 threads", Trials: []Trial{{N: 1, Violation: "3 stalls over 100 ms"}}},
			Inconclusive, 1, "2 CPUs < 16 threads; expectation violated in 1 of 1 reloads"},
		// Within one trial, an unmet precondition makes the violation proof of nothing.
		{"a trial's unmet precondition outweighs its violation", Outcome{Trials: []Trial{held, {N: 2, Violation: "first/marker lost", Unmet: "old worker never left"}}},
			Inconclusive, 0, "reload 2: old worker never left (a violation was also recorded: first/marker lost)"},
		{"a run precondition outweighs a failed control", Outcome{Unmet: "never meshed", ControlFailed: "control failed"}, Inconclusive, 0, "never meshed"},
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
	// A gate over several cells: ERROR, else REPRODUCED (an INCONCLUSIVE
	// cell must not hide it), else INCONCLUSIVE, else PASS.
	for _, c := range []struct {
		vs   []Verdict
		want Verdict
	}{
		{nil, Pass}, {[]Verdict{Pass, Pass}, Pass}, {[]Verdict{Pass, Inconclusive}, Inconclusive},
		{[]Verdict{Inconclusive, Reproduced, Pass}, Reproduced}, {[]Verdict{Reproduced, Inconclusive}, Reproduced},
		{[]Verdict{Reproduced, Error, Inconclusive}, Error},
	} {
		if got := Worst(c.vs...); got != c.want {
			t.Errorf("Worst(%v) = %s, want %s", c.vs, got, c.want)
		}
	}
}

func TestGitBisectCodes(t *testing.T) {
	for v, code := range map[Verdict]int{Pass: 0, Reproduced: 1, Inconclusive: 125, Error: 125} {
		if v.GitBisectCode() != code {
			t.Errorf("%s: git bisect code %d, want %d", v, v.GitBisectCode(), code)
		}
	}
}

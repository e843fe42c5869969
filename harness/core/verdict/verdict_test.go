package verdict

import (
	"errors"
	"strings"
	"testing"

	"github.com/harp-project/harp/harness/core/obs"
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

func TestLastingAndWeak(t *testing.T) {
	stuck := Trial{N: 1, Unmet: "after reload: resync never finished", Lasting: true, Weak: "first/marker held, second/marker lost"}
	transient := Trial{N: 1, Unmet: "reload: no new worker within 20s"}
	lost := Trial{N: 2, Violation: "second/marker lost"}
	cases := []struct {
		name    string
		o       Outcome
		lasting bool
		weak    string
	}{
		{"a lasting unmet precondition", Outcome{Trials: []Trial{stuck}}, true, "reload 1: first/marker held, second/marker lost"},
		{"a transient one", Outcome{Trials: []Trial{transient}}, false, ""},
		// A real verdict stands alone: neither applies beside a violation.
		{"beside a violation", Outcome{Trials: []Trial{stuck, lost}}, false, ""},
		{"a failed control discredits both", Outcome{Trials: []Trial{stuck}, ControlFailed: "control failed"}, false, ""},
		{"a run-wide unmet precondition discredits the observation", Outcome{Trials: []Trial{stuck}, Unmet: "2 CPUs < 16 threads"}, true, ""},
		{"a harness error is not inconclusive", Outcome{Trials: []Trial{stuck}, Err: errors.New("docker died")}, false, ""},
	}
	for _, c := range cases {
		if got := Lasting(c.o, "reloads"); got != c.lasting {
			t.Errorf("%s: Lasting = %v, want %v", c.name, got, c.lasting)
		}
		if got := WeakObservation(c.o, "reloads"); got != c.weak {
			t.Errorf("%s: WeakObservation = %q, want %q", c.name, got, c.weak)
		}
		if v, _, _ := Decide(c.o, "reloads"); v == Pass {
			t.Errorf("%s: a weak or lasting observation made a PASS", c.name)
		}
	}
}

func TestWithMemoryErrors(t *testing.T) {
	cs := []Crash{{PID: 7, Node: "n", Signal: "Segmentation fault"}, {PID: 8, Node: "node-x", ASan: "==8==ERROR: ...", ASanSummary: "heap-use-after-free src/proxy.c:3086 in cli_parse_enable_frontend"}}
	got := WithMemoryErrors("expected behaviour held in 3 of 3 rounds", cs)
	if got != "expected behaviour held in 3 of 3 rounds; AddressSanitizer: worker 8 of node-x: heap-use-after-free src/proxy.c:3086 in cli_parse_enable_frontend" {
		t.Errorf("reason = %q", got)
	}
	if WithMemoryErrors("r", cs[:1]) != "r" {
		t.Error("a crash without an ASan report adds nothing to the line")
	}
}

func TestSingular(t *testing.T) {
	for in, want := range map[string]string{"reloads": "reload", "histories": "history", "trials": "trial", "rounds": "round", "x": "x"} {
		if got := Singular(in); got != want {
			t.Errorf("Singular(%q) = %q", in, got)
		}
	}
}

// The one rule on observations: evidence with an unknown observation
// decides nothing, whatever the judge said.
func TestUnknownObservationIsNeverAVerdict(t *testing.T) {
	type facts struct {
		Keys obs.Of[[]string] `json:"keys"`
	}
	lost := Trial{N: 1, Violation: "every key lost by the reload", Evidence: &facts{Keys: obs.Failure[[]string]("show table: i/o timeout")}}
	held := Trial{N: 2, Evidence: facts{Keys: obs.Failure[[]string]("connection refused")}}
	v, n, reason := Decide(Outcome{Trials: []Trial{lost, held}}, "reloads")
	if v != Inconclusive || n != 0 {
		t.Fatalf("got %s (%d violated): %s", v, n, reason)
	}
	want := "reload 1: harp could not observe keys: show table: i/o timeout (a violation was also recorded: every key lost by the reload); reload 2: harp could not observe keys: connection refused"
	if reason != want {
		t.Fatalf("reason %q\nwant   %q", reason, want)
	}
	seen := Trial{N: 1, Violation: "lost", Evidence: facts{Keys: obs.Value([]string{})}}
	if v, _, _ := Decide(Outcome{Trials: []Trial{seen}}, "reloads"); v != Reproduced {
		t.Fatalf("an empty table HAProxy showed is a value: %s", v)
	}
}

// A process seen gone explains the failed reads beside the violation it
// makes, never a pass.
func TestAnExitExplainsOnlyBesideItsViolation(t *testing.T) {
	type facts struct {
		Master obs.Of[obs.Exit] `json:"master"`
		HTTP   obs.Of[int]      `json:"http"`
	}
	f := facts{Master: obs.Value(obs.Exit{Process: "master", Signal: "SIGSEGV"}), HTTP: obs.Failure[int]("no answer")}
	if v, _, r := Decide(Outcome{Trials: []Trial{{N: 1, Violation: "the master exited on SIGSEGV", Evidence: f}}}, "cycles"); v != Reproduced {
		t.Fatalf("%s: %s", v, r)
	}
	if v, _, r := Decide(Outcome{Trials: []Trial{{N: 1, Evidence: f}}}, "cycles"); v != Inconclusive {
		t.Fatalf("a judge that saw no violation beside an exit still has unknowns: %s: %s", v, r)
	}
}

// A trial not applicable to the build is never held: it counts apart,
// and a run where none applied is INCONCLUSIVE (f084f4d said "held in 3
// of 3" for three cases of which two were not applicable, and PASS for
// none applicable).
func TestNotApplicableIsNeverHeld(t *testing.T) {
	na := func(n int) Trial { return Trial{N: n, NotApplicable: "c needs HAProxy 3.1"} }
	v, _, reason := Decide(Outcome{Trials: []Trial{{N: 1}, na(2), na(3)}}, "cases")
	if v != Pass || reason != "expected behaviour held in 1 of 1 cases observed; 2 of 3 cases not applicable to this build (held by none)" {
		t.Errorf("%s: %s", v, reason)
	}
	v, _, reason = Decide(Outcome{Trials: []Trial{na(1), na(2)}}, "cases")
	if v != Inconclusive || !strings.Contains(reason, "none of the 2 cases applies to this build") {
		t.Errorf("none applies: %s: %s", v, reason)
	}
	v, k, reason := Decide(Outcome{Trials: []Trial{{N: 1, Violation: "x"}, na(2)}}, "cases")
	if v != Reproduced || k != 1 || reason != "x in 1 of 1 cases; 1 of 2 cases not applicable to this build (held by none)" {
		t.Errorf("%s %d: %s", v, k, reason)
	}
}

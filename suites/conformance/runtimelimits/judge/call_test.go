package judge

import (
	"testing"
	"time"
)

func TestFirstLate(t *testing.T) {
	bound, hang := 3*time.Second, 15*time.Second
	fast := Call{Command: "set maxconn frontend web 0", Took: time.Millisecond}
	for _, c := range []struct {
		name     string
		calls    []Call
		what     string
		answered bool
	}{
		{"none", nil, "", false},
		{"all in time", []Call{fast, {Command: "b", Took: bound}}, "", false},
		{"answered past the bound: slow", []Call{fast, {Command: "b", Took: 4 * time.Second}}, `"b" answered after 4s, beyond 3s`, true},
		{"closed without a byte", []Call{fast, {Command: "b", Took: 2104 * time.Millisecond, Err: `127.0.0.1:1: the connection closed without an answer to "b"`}},
			`"b" was not answered: the connection closed 2.1s after it was sent`, false},
		{"no answer", []Call{{Command: "a", Took: hang, Err: "i/o timeout"}, {Command: "b", Took: 4 * time.Second}}, `"a" did not answer within 15s (i/o timeout)`, false},
		{"an error within the bound is no answer", []Call{{Command: "a", Took: time.Millisecond, Err: NotSent + "dial tcp: connection refused"}},
			`"a" did not answer within 15s (never reached the socket: dial tcp: connection refused)`, false},
	} {
		what, answered := FirstLate(c.calls, bound, hang)
		if what != c.what || answered != c.answered {
			t.Errorf("%s: got %q, %v; want %q, %v", c.name, what, answered, c.what, c.answered)
		}
	}
}

func TestCall(t *testing.T) {
	if c := (Call{Err: NotSent + "dial tcp: connection refused"}); !c.NotSent() || !c.Late(time.Second) {
		t.Errorf("a command never sent: NotSent %v, Late %v", c.NotSent(), c.Late(time.Second))
	}
	if c := (Call{Err: "i/o timeout"}); c.NotSent() {
		t.Errorf("a timeout reached the socket")
	}
	if (Call{Took: time.Second}).Late(time.Second) || !(Call{Took: time.Second + 1}).Late(time.Second) {
		t.Errorf("Late: the bound itself is in time, past it is late")
	}
	calls := []Call{{Command: "a", Took: 2}, {Command: "b", Took: 5}, {Command: "c", Took: 5}}
	if s := Slowest(calls); s.Command != "b" {
		t.Errorf("Slowest: %q, want the first of the longest", s.Command)
	}
	if s := Slowest(nil); s.Command != "" {
		t.Errorf("Slowest of none: %q", s.Command)
	}
}

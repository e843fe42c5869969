package runner

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// An interrupted run says so: the error of whatever the interrupt cut
// short reads "context canceled", which tells the user nothing.
func TestStoppedSaysInterrupted(t *testing.T) {
	live := context.Background()
	cancelled, cancel := context.WithCancelCause(live)
	cancel(errors.New("interrupted by signal: interrupt"))
	plain, cancel2 := context.WithCancel(live)
	cancel2()
	canceled := errors.New("reading show info: context canceled")
	for _, c := range []struct {
		ctx  context.Context
		err  error
		want string
	}{
		{live, nil, ""},
		{live, canceled, "reading show info: context canceled"},
		{cancelled, canceled, "interrupted by signal: interrupt: reading show info: context canceled"},
		{cancelled, nil, "interrupted by signal: interrupt"},
		{plain, canceled, "interrupted: reading show info: context canceled"},
		{plain, errors.New("interrupted: x"), "interrupted: x"},
	} {
		err := Stopped(c.ctx, c.err)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("Stopped(%v, %v) = %q, want %q", c.ctx.Err(), c.err, got, c.want)
		}
		if err != nil && c.err != nil && !errors.Is(err, c.err) {
			t.Errorf("Stopped lost the error it wraps: %v", err)
		}
	}
	if !strings.Contains(Stopped(cancelled, nil).Error(), "interrupted") {
		t.Error("no interrupted")
	}
}

package cli

import (
	"context"
	"time"
)

// Fault, when set (the nemesis: harp --harness-faults), is asked before
// each raw exchange, dial and read to a close what harp's own side does
// wrong this time. Whatever it injects must end as harp's failure (an
// error, a reset fate) or as a late look at what HAProxy already said,
// never as an answer of HAProxy's.
var Fault func(ctx context.Context, path, target string) Injected

// SendFault, when set (the nemesis), is asked before each send of a
// session harp holds (the peers client) what harp's own side does wrong:
// stall for late, or end the session itself. Either must read as harp's
// (the session's send gap, its end by harp), never as HAProxy's answer.
var SendFault func(op string) (late time.Duration, end bool)

// Injected is one harness fault on an exchange path ("raw", "dial",
// "read-to-close"); the zero value is none.
type Injected struct {
	// Err: harp's side fails: the dial, or harp ends the connection
	// before it has read the answer.
	Err error
	// Late: harp reads this late (a starved or slow client).
	Late time.Duration
	// Cut: harp stops reading after the first bytes came.
	Cut bool
}

func inject(ctx context.Context, path, target string) Injected {
	if f := Fault; f != nil {
		return f(ctx, path, target)
	}
	return Injected{}
}

// Sleep waits d or until ctx ends: a fault's delay on harp's side.
func Sleep(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

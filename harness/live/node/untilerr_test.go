package node

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestUntilErr(t *testing.T) {
	ctx := context.Background()
	reads := 0
	count := func() (int, error) { reads++; return reads, nil }
	if v, err := UntilErr(ctx, time.Second, time.Millisecond, count, func(v int) bool { return v >= 3 }); err != nil || v != 3 {
		t.Errorf("got %d, %v; want the reading that held (3), nil", v, err)
	}
	reads = 0
	if v, err := UntilErr(ctx, 20*time.Millisecond, time.Millisecond, count, func(int) bool { return false }); !errors.Is(err, ErrDeadline) || v != reads {
		t.Errorf("never held: got %d, %v; want the last reading (%d), ErrDeadline", v, err, reads)
	}
	refused := errors.New("refused")
	reads = 0
	failing := func() (int, error) {
		if reads++; reads == 3 {
			return -1, refused // a failed read ends the wait
		}
		return reads, nil
	}
	if v, err := UntilErr(ctx, time.Second, time.Millisecond, failing, func(int) bool { return false }); !errors.Is(err, refused) || v != 2 || reads != 3 {
		t.Errorf("a failed read: got %d, %v after %d reads; want the last good reading (2), its error, no read after it", v, err, reads)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := UntilErr(cctx, time.Second, 10*time.Millisecond, count, func(int) bool { return false }); !errors.Is(err, context.Canceled) {
		t.Errorf("an ended context: %v", err)
	}
}

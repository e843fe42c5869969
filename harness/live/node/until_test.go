package node

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestUntil(t *testing.T) {
	ctx := context.Background()
	reads := 0
	read := func() (int, error) {
		reads++
		if reads%2 == 1 {
			return 0, errors.New("i/o timeout") // a failed read is not yet
		}
		return reads, nil
	}
	if v, ok := Until(ctx, time.Second, time.Millisecond, read, func(v int) bool { return v >= 4 }); !ok || v != 4 {
		t.Errorf("got %d, %v; want the reading that held (4), true", v, ok)
	}
	reads = 0
	if v, ok := Until(ctx, 20*time.Millisecond, time.Millisecond, read, func(int) bool { return false }); ok || v == 0 || v%2 != 0 {
		t.Errorf("never held: got %d, %v; want the last successful reading, false", v, ok)
	}
	never := func() (string, error) { return "partial", errors.New("refused") }
	if v, ok := Until(ctx, 5*time.Millisecond, time.Millisecond, never, func(string) bool { return true }); ok || v != "" {
		t.Errorf("every read failed: got %q, %v; want the zero value, false", v, ok)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, ok := Until(cctx, time.Second, 10*time.Millisecond, read, func(int) bool { return false }); ok {
		t.Errorf("an ended context held")
	}
}

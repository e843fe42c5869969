package partition

import (
	"testing"
	"time"
)

func TestLatest(t *testing.T) {
	t0 := time.Unix(1000, 0)
	if got := latest(nil); !got.IsZero() {
		t.Fatalf("latest(nil) = %v, want the zero time", got)
	}
	at := map[string]time.Time{"a": t0, "b": t0.Add(3 * time.Second), "c": t0.Add(time.Second)}
	if got := latest(at); !got.Equal(t0.Add(3 * time.Second)) {
		t.Fatalf("latest = %v, want %v", got, t0.Add(3*time.Second))
	}
}

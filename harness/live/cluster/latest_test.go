package cluster

import (
	"testing"
	"time"
)

func TestLatest(t *testing.T) {
	t0 := time.Unix(1000, 0)
	if got := Latest(nil); !got.IsZero() {
		t.Fatalf("Latest(nil) = %v, want the zero time", got)
	}
	at := map[string]time.Time{"a": t0, "b": t0.Add(3 * time.Second), "c": t0.Add(time.Second)}
	if got := Latest(at); !got.Equal(t0.Add(3 * time.Second)) {
		t.Fatalf("Latest = %v, want %v", got, t0.Add(3*time.Second))
	}
}

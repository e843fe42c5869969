package reloadkeepsentries

import (
	"testing"
	"time"
)

func TestWorkerAgeBound(t *testing.T) {
	t0 := time.Unix(1000, 0)
	// Listed: the uptime bound is tighter than the time since start.
	a := workerAge{Uptime: 2 * time.Second, started: t0, asked: t0.Add(10 * time.Second)}
	if got, want := a.bound(t0.Add(11*time.Second)), 4*time.Second; got != want {
		t.Errorf("bound = %s, want %s", got, want)
	}
	// Not listed: only the time since start.
	a.Uptime = -1
	if got, want := a.bound(t0.Add(11*time.Second)), 11*time.Second; got != want {
		t.Errorf("bound unlisted = %s, want %s", got, want)
	}
	// The time since start when it is tighter.
	a = workerAge{Uptime: 9 * time.Second, started: t0, asked: t0.Add(time.Second)}
	if got, want := a.bound(t0.Add(2*time.Second)), 2*time.Second; got != want {
		t.Errorf("bound early = %s, want %s", got, want)
	}
}

package slowhttp

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

func hit(t *testing.T, url string, n int) time.Duration {
	t.Helper()
	t0 := time.Now()
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := http.Get(url)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Errorf("status %d", resp.StatusCode)
			}
		}()
	}
	wg.Wait()
	return time.Since(t0)
}

func TestSerialServiceTime(t *testing.T) {
	h := New(Options{Service: 50 * time.Millisecond, Serial: true})
	srv := httptest.NewServer(h)
	defer srv.Close()
	// Four requests at once take at least four service times one after another.
	if d := hit(t, srv.URL, 4); d < 200*time.Millisecond {
		t.Errorf("4 serial requests took %s, want >= 200ms", d)
	}
	if h.Served() != 4 {
		t.Errorf("served %d", h.Served())
	}
}

func TestParallelAndFast(t *testing.T) {
	par := httptest.NewServer(New(Options{Service: 100 * time.Millisecond}))
	defer par.Close()
	if d := hit(t, par.URL, 4); d < 100*time.Millisecond || d > 390*time.Millisecond {
		t.Errorf("4 parallel requests took %s, want about one service time", d)
	}
	fast := httptest.NewServer(New(Options{Fast: true, Service: time.Hour}))
	defer fast.Close()
	if d := hit(t, fast.URL, 4); d > time.Second {
		t.Errorf("fast mode took %s", d)
	}
}

func TestDefaultServiceTime(t *testing.T) {
	if New(Options{}).o.Service != 100*time.Millisecond {
		t.Error("default service time is not 100ms")
	}
}

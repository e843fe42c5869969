package load

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// flaky answers 503 to the first fails requests, then 200.
func flaky(fails int64) (*httptest.Server, *atomic.Int64) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if n.Add(1) <= fails {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	return srv, &n
}

func TestWaitServed(t *testing.T) {
	srv, n := flaky(3)
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	if !WaitServed(context.Background(), addr, 5*time.Second) || n.Load() != 4 {
		t.Errorf("served after 3 refusals: want true after 4 requests, got %d requests", n.Load())
	}
	never, _ := flaky(1 << 40)
	defer never.Close()
	t0 := time.Now()
	if WaitServed(context.Background(), strings.TrimPrefix(never.URL, "http://"), 300*time.Millisecond) {
		t.Error("never served: want false")
	}
	if el := time.Since(t0); el < 300*time.Millisecond || el > 2*time.Second {
		t.Errorf("never served: gave up after %s, want about 300 ms", el)
	}
}

func TestProbe(t *testing.T) {
	srv, n := flaky(2)
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	if ok, took := Probe(context.Background(), addr, 2); ok || took <= 0 || n.Load() != 2 {
		t.Errorf("2 refusals, 2 tries: ok %v took %s after %d requests", ok, took, n.Load())
	}
	if ok, _ := Probe(context.Background(), addr, 3); !ok || n.Load() != 3 {
		t.Errorf("third request served: ok %v after %d requests", ok, n.Load())
	}
}

func TestBackground(t *testing.T) {
	srv, _ := flaky(0)
	defer srv.Close()
	stop := Background(context.Background(), Options{URL: srv.URL + "/", Rate: 100, Duration: time.Minute, Timeout: time.Second})
	time.Sleep(500 * time.Millisecond)
	t0 := time.Now()
	r := stop()
	if time.Since(t0) > 5*time.Second || r.Requests == 0 || r.Success != 1 {
		t.Errorf("stopped after %s: %s", time.Since(t0), r)
	}
	if again := stop(); again.Requests != r.Requests {
		t.Errorf("second stop: %d requests, first %d", again.Requests, r.Requests)
	}
}

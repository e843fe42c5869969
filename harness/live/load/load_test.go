package load

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/harp-project/harp/harness/live/slowhttp"
)

func TestAttackFastBackend(t *testing.T) {
	srv := httptest.NewServer(slowhttp.New(slowhttp.Options{Fast: true}))
	defer srv.Close()
	var ticks int
	r, err := Attack(context.Background(), Options{URL: srv.URL, Rate: 200, Duration: 2 * time.Second, Timeout: time.Second,
		Progress: func(uint64, time.Duration) { ticks++ }})
	if err != nil {
		t.Fatal(err)
	}
	if r.Requests < 350 || r.Requests > 450 || r.Success != 1 || r.StatusCodes["200"] != int(r.Requests) {
		t.Errorf("fast backend: %s", r)
	}
	if r.Rate < 150 || r.P99 <= 0 || ticks == 0 {
		t.Errorf("rate %.0f p99 %s ticks %d", r.Rate, r.P99, ticks)
	}
}

func TestAttackSlowBackendTimesOut(t *testing.T) {
	// 10 requests/s served, 50 sent: most time out, and that is counted.
	srv := httptest.NewServer(slowhttp.New(slowhttp.Options{Service: 100 * time.Millisecond, Serial: true}))
	defer srv.Close()
	r, err := Attack(context.Background(), Options{URL: srv.URL, Rate: 50, Duration: time.Second, Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if r.Success > 0.5 || len(r.Errors) == 0 || r.StatusCodes["0"] == 0 {
		t.Errorf("slow backend: %s, errors %v", r, r.Errors)
	}
}

func TestAttackStopsWithContext(t *testing.T) {
	srv := httptest.NewServer(slowhttp.New(slowhttp.Options{Fast: true}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	r, err := Attack(ctx, Options{URL: srv.URL, Rate: 100, Duration: time.Minute})
	if err == nil || r.Duration > 5*time.Second {
		t.Errorf("attack did not stop: %v after %s", err, r.Duration)
	}
}

// Keys rotate round robin in the key header: traffic that writes to several
// stick-table entries.
func TestAttackRotatesKeys(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.Header.Get("x-key")]++
		mu.Unlock()
	}))
	defer srv.Close()
	r, err := Attack(context.Background(), Options{URL: srv.URL, Rate: 100, Duration: time.Second, KeyHeader: "x-key", Keys: []string{"a", "b", "c"}})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 3 || seen[""] != 0 || r.Requests < 90 {
		t.Fatalf("keys seen %v over %d requests", seen, r.Requests)
	}
	for k, n := range seen {
		if n < int(r.Requests)/3-1 || n > int(r.Requests)/3+1 {
			t.Errorf("key %s got %d of %d requests", k, n, r.Requests)
		}
	}
}

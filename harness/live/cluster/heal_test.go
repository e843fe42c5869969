package cluster

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2/client"
)

// A fake of toxiproxy's API for one proxy: its toxics and whether it is
// enabled; hang makes every call hang until the client gives up.
type fakeProxy struct {
	mu      sync.Mutex
	enabled bool
	toxics  []string
	hang    chan struct{}
}

func (f *fakeProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if f.hang != nil {
		select {
		case <-f.hang:
		case <-r.Context().Done():
		}
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	const base = "/proxies/a->b"
	switch {
	case r.Method == "GET" && r.URL.Path == base:
		var ts []map[string]string
		for _, t := range f.toxics {
			ts = append(ts, map[string]string{"name": t})
		}
		json.NewEncoder(w).Encode(map[string]any{"name": "a->b", "enabled": f.enabled, "toxics": ts})
	case r.Method == "DELETE" && strings.HasPrefix(r.URL.Path, base+"/toxics/"):
		name := strings.TrimPrefix(r.URL.Path, base+"/toxics/")
		for i, t := range f.toxics {
			if t == name {
				f.toxics = append(f.toxics[:i], f.toxics[i+1:]...)
				w.WriteHeader(http.StatusNoContent)
				return
			}
		}
		http.Error(w, `{"error":"toxic not found"}`, http.StatusNotFound)
	case r.Method == "POST" && r.URL.Path == base:
		var body struct{ Enabled bool }
		json.NewDecoder(r.Body).Decode(&body)
		f.enabled = body.Enabled
		json.NewEncoder(w).Encode(map[string]any{"name": "a->b", "enabled": f.enabled})
	default:
		http.Error(w, "unexpected "+r.Method+" "+r.URL.Path, http.StatusBadRequest)
	}
}

func fakeLink(f *fakeProxy) (*Link, func()) {
	srv := httptest.NewServer(f)
	return &Link{From: &Member{MemberDef: MemberDef{Name: "a"}}, To: &Member{MemberDef: MemberDef{Name: "b"}}, api: srv.URL, proxy: &toxiproxy.Proxy{}}, srv.Close
}

// Restore clears a link and Fault reads it back; a hung API is an error
// within the deadline, never a hang (#23: a toxiproxy timeout on heal).
func TestRestoreAndFault(t *testing.T) {
	f := &fakeProxy{toxics: []string{"latency_upstream", "latency_downstream"}}
	l, stop := fakeLink(f)
	defer stop()
	ctx := context.Background()
	if got, err := l.Fault(ctx); err != nil || got != "a->b: down latency_upstream latency_downstream" {
		t.Fatalf("a faulted link: %q %v", got, err)
	}
	if err := l.Restore(ctx); err != nil {
		t.Fatal(err)
	}
	if got, err := l.Fault(ctx); err != nil || got != "" || !l.proxy.Enabled {
		t.Fatalf("restored: %q %v", got, err)
	}

	hung := &fakeProxy{hang: make(chan struct{})}
	l, stop = fakeLink(hung)
	defer stop()
	defer close(hung.hang)
	cctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := l.Restore(cctx); err == nil || time.Since(start) > 5*time.Second {
		t.Fatalf("a hung API: %v after %s", err, time.Since(start))
	}
}

// Package slowhttp is harp's own slow HTTP backend: each request takes a
// service time, one request at a time by default (100 ms: about 10
// requests/s), so connection slots in front of it free slowly; or fast.
package slowhttp

import (
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Options shape the backend.
type Options struct {
	Service time.Duration // time each request takes (default 100 ms)
	Serial  bool          // serve one request at a time
	Fast    bool          // answer at once, in parallel
}

// Handler serves every request with "ok" after the service time.
type Handler struct {
	o      Options
	mu     sync.Mutex
	served atomic.Int64
}

// New makes a handler.
func New(o Options) *Handler {
	if o.Service == 0 {
		o.Service = 100 * time.Millisecond
	}
	return &Handler{o: o}
}

// Served is the number of requests answered.
func (h *Handler) Served() int64 { return h.served.Load() }

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !h.o.Fast {
		if h.o.Serial {
			h.mu.Lock()
			defer h.mu.Unlock()
		}
		t := time.NewTimer(h.o.Service)
		select {
		case <-t.C:
		case <-r.Context().Done(): // the client gave up: free the slot
			t.Stop()
			return
		}
	}
	n := h.served.Add(1)
	w.Header().Set("Content-Type", "text/plain")
	fmt.Fprintf(w, "ok %d\n", n)
}

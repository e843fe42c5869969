package load

import (
	"context"
	"net/http"
	"time"
)

// WaitServed sends single GETs to addr ("host:port"), each on a fresh
// connection and bounded by 1 s, every 100 ms until one is answered 200
// or within passes (the first request is sent at once): whether one was.
func WaitServed(ctx context.Context, addr string, within time.Duration) bool {
	cl := &http.Client{Timeout: time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	deadline := time.Now().Add(within)
	for {
		req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+addr+"/", nil)
		if resp, err := cl.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return true
			}
		}
		if time.Now().After(deadline) {
			return false
		}
		t := time.NewTimer(100 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return false
		case <-t.C:
		}
	}
}

package load

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/harp-project/harp/harness/core/obs"
)

func TestWaitResumed(t *testing.T) {
	ctx := context.Background()
	reads := int64(0)
	count := func() obs.Of[int64] { reads++; return obs.Value(reads * 10) }
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	defer up.Close()
	r := WaitResumed(ctx, strings.TrimPrefix(up.URL, "http://"), time.Second, count)
	if !r.Served || r.Took <= 0 || r.Before != obs.Value[int64](10) || r.After.State != "" {
		t.Errorf("served: %+v; want served, timed, the count read once", r)
	}
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(503) }))
	defer down.Close()
	reads = 0
	r = WaitResumed(ctx, strings.TrimPrefix(down.URL, "http://"), 300*time.Millisecond, count)
	if r.Served || r.Took != 0 || r.Before != obs.Value[int64](10) || r.After != obs.Value[int64](20) {
		t.Errorf("never served: %+v; want not served, the count read before and after", r)
	}
}

// Package load drives HTTP load with vegeta as a library: a constant rate
// for a duration, each request bounded by a timeout, and what came back
// summarised (rate achieved, status codes, latency percentiles, errors).
package load

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/harp-project/harp/harness/core/obs"
	"github.com/harp-project/harp/harness/live/nemesis"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// Options of an attack.
type Options struct {
	URL      string
	Rate     int           // requests per second (default 1000)
	Duration time.Duration // default 15 s
	Timeout  time.Duration // per request (default 30 s)
	// KeyHeader and Keys, when set, send each request with the header
	// KeyHeader set to the next of Keys (round robin): real traffic that
	// writes to several stick-table entries.
	KeyHeader string
	Keys      []string
	// Progress, when set, is called about once a second with the requests
	// answered so far.
	Progress func(done uint64, elapsed time.Duration)
}

// Result summarises an attack.
type Result struct {
	Requests    uint64         `json:"requests"`
	Rate        float64        `json:"rate"`       // requests sent per second
	Throughput  float64        `json:"throughput"` // successful requests per second
	Success     float64        `json:"success"`    // ratio of 2xx/3xx
	StatusCodes map[string]int `json:"status_codes"`
	P50         time.Duration  `json:"p50_ns"`
	P95         time.Duration  `json:"p95_ns"`
	P99         time.Duration  `json:"p99_ns"`
	Max         time.Duration  `json:"max_ns"`
	Errors      []string       `json:"errors"` // distinct error texts
	Duration    time.Duration  `json:"duration_ns"`
}

// String is one line for progress and reports.
func (r Result) String() string {
	return fmt.Sprintf("%d requests at %.0f/s, %.0f%% success, codes %v, p50 %s p95 %s p99 %s max %s, %d distinct errors",
		r.Requests, r.Rate, 100*r.Success, r.StatusCodes, r.P50.Round(time.Millisecond), r.P95.Round(time.Millisecond),
		r.P99.Round(time.Millisecond), r.Max.Round(time.Millisecond), len(r.Errors))
}

// Attack sends GET requests to o.URL at o.Rate for o.Duration. It stops
// early when ctx is done.
func Attack(ctx context.Context, o Options) (Result, error) {
	if o.URL == "" {
		return Result{}, fmt.Errorf("load: no target URL")
	}
	if o.Rate <= 0 {
		o.Rate = 1000
	}
	if o.Duration <= 0 {
		o.Duration = 15 * time.Second
	}
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	atk := vegeta.NewAttacker(vegeta.Timeout(o.Timeout), vegeta.KeepAlive(false))
	targets := []vegeta.Target{{Method: "GET", URL: o.URL}}
	if o.KeyHeader != "" && len(o.Keys) > 0 {
		targets = targets[:0]
		for _, k := range o.Keys {
			targets = append(targets, vegeta.Target{Method: "GET", URL: o.URL, Header: http.Header{o.KeyHeader: []string{k}}})
		}
	}
	tr := vegeta.NewStaticTargeter(targets...)
	var m vegeta.Metrics
	t0 := time.Now()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	results := atk.Attack(tr, vegeta.Rate{Freq: o.Rate, Per: time.Second}, o.Duration, "harp")
	cancelled := ctx.Done()
	for done := false; !done; {
		select {
		case res, ok := <-results:
			if !ok {
				done = true
				break
			}
			m.Add(res)
		case <-tick.C:
			if o.Progress != nil {
				o.Progress(m.Requests, time.Since(t0))
			}
		case <-cancelled:
			atk.Stop()
			cancelled = nil // stopped once; wait for the results to drain
		}
	}
	m.Close()
	return Result{
		Requests: m.Requests, Rate: m.Rate, Throughput: m.Throughput, Success: m.Success, StatusCodes: m.StatusCodes,
		P50: m.Latencies.P50, P95: m.Latencies.P95, P99: m.Latencies.P99, Max: m.Latencies.Max,
		Errors: m.Errors, Duration: time.Since(t0),
	}, ctx.Err()
}

// Get sends one GET to addr ("host:port") on a fresh connection and gives
// its status, 0 when nothing answered within 3 s: a probe, not load.
func Get(ctx context.Context, addr string) int {
	if nemesis.HTTP(addr) != nil {
		return 0
	}
	cl := &http.Client{Timeout: 3 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	req, err := http.NewRequestWithContext(ctx, "GET", "http://"+addr+"/", nil)
	if err != nil {
		return 0
	}
	resp, err := cl.Do(req)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// Status asks addr for a GET until HAProxy answers with a status or bound
// passes: a status is HAProxy's answer; no answer at all within bound is
// harp's failure to observe, until a suite's control says otherwise.
func Status(ctx context.Context, addr string, bound time.Duration) obs.Of[int] {
	deadline := time.Now().Add(bound)
	tries := 0
	for {
		tries++
		if code := Get(ctx, addr); code != 0 {
			return obs.Value(code)
		}
		if ctx.Err() != nil || time.Now().After(deadline) {
			return obs.Failure[int]("no HTTP answer from %s in %d tries over %s", addr, tries, bound)
		}
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
}

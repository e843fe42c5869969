// Package monitor runs the doctor as a service (harp doctor --watch): it
// reads every runtime socket each interval, as the one-shot doctor does
// but with table contents streamed into digests, and serves the latest
// diagnosis as Prometheus metrics (/metrics), a health check of its own
// (/healthz) and an HTML status page (/).
//
// What it serves names instances, peers, sections and tables, never a
// table's keys (client addresses, session ids): counts only. What it
// sends the sockets is read-only: show info, show peers, show table and
// show table <name>.
package monitor

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/harp-project/harp/harness/ops/doctor"
)

// DefaultListen is where a monitor listens unless told: loopback only, so
// nothing leaves the host unless the operator says so.
const DefaultListen = "127.0.0.1:9650"

// Bounds of the interval between reads: each read opens a connection per
// command on every socket, and an hour between reads is no monitor.
const (
	MinInterval = time.Second
	MaxInterval = time.Hour
)

// Options describe a monitor.
type Options struct {
	Names, Sockets []string
	Interval       time.Duration
	// Timeout bounds one read of every socket (at most Interval).
	Timeout time.Duration
	// Budget is the memory one read's answers and digests may hold.
	Budget int64
	// Log is told when the diagnosis changes (nil: nothing said).
	Log func(string)
	// Read replaces reading the sockets (tests); nil reads them.
	Read func(context.Context) []doctor.Instance
}

// Snapshot is one read and its diagnosis.
type Snapshot struct {
	D     doctor.Diagnosis
	Start time.Time     // when the read began
	Took  time.Duration // reading every socket and diagnosing
	N     int           // reads so far, this one included
	// Unknown are the links of the instances whose peers this read could
	// not show, as the last read that showed them saw them (unseen.go).
	Unknown []KnownLink
	peerOf  map[[2]string]string // (section, peer name) -> instance, this read's or remembered
}

// Monitor reads the sockets each interval and serves what it found.
type Monitor struct {
	o    Options
	read func(context.Context) []doctor.Instance

	mu   sync.Mutex
	last *Snapshot
	mem  memory // what the reads showed of each instance's peers

	reg        *prometheus.Registry
	reads      prometheus.Counter
	readErrors *prometheus.CounterVec
}

// New makes a monitor; nothing is read before Run or ReadOnce.
func New(o Options) *Monitor {
	if o.Timeout <= 0 || o.Timeout > o.Interval {
		o.Timeout = o.Interval
	}
	if o.Budget <= 0 {
		o.Budget = doctor.RunBudget
	}
	m := &Monitor{o: o, read: o.Read, reg: prometheus.NewRegistry()}
	if m.read == nil {
		m.read = doctor.DigestReader(o.Timeout, o.Names, o.Sockets, o.Budget)
	}
	m.reads = prometheus.NewCounter(prometheus.CounterOpts{Name: "harp_doctor_reads_total",
		Help: "Reads of every socket since harp started."})
	m.readErrors = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "harp_socket_read_errors_total",
		Help: "Socket reads that failed since harp started: a socket not read at all (one each read), or a command it refused or failed (one each)."}, []string{"instance"})
	for _, n := range o.Names {
		m.readErrors.WithLabelValues(n) // at 0 from the start, so rate() sees the first error
	}
	m.reg.MustRegister(m.reads, m.readErrors, &collector{m},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Last is the latest read, nil before the first.
func (m *Monitor) Last() *Snapshot {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.last
}

// ReadOnce reads every socket, diagnoses and keeps the result as the
// latest; a read cut short by ctx is dropped (its sockets would all read
// as unreachable).
func (m *Monitor) ReadOnce(ctx context.Context) (*Snapshot, bool) {
	start := time.Now()
	ins := m.read(ctx)
	if ctx.Err() != nil {
		return nil, false
	}
	d := doctor.Diagnose(ins)
	for i := range d.Instances { // compared: nothing of the contents is kept
		d.Instances[i].Digests, d.Instances[i].Raw = nil, nil
	}
	m.reads.Inc()
	for _, in := range d.Instances {
		switch {
		case in.Unreachable != "":
			m.readErrors.WithLabelValues(in.Name).Inc()
		case len(in.Errors) > 0:
			m.readErrors.WithLabelValues(in.Name).Add(float64(len(in.Errors)))
		}
	}
	m.mu.Lock()
	prev := m.last
	s := &Snapshot{D: d, Start: start, Took: time.Since(start), N: 1}
	s.Unknown, s.peerOf = m.mem.update(d, start)
	if prev != nil {
		s.N = prev.N + 1
	}
	m.last = s
	m.mu.Unlock()
	if m.o.Log != nil && (prev == nil || prev.D.Cause != d.Cause) {
		m.o.Log(fmt.Sprintf("read %d: %s", s.N, summary(d)))
	}
	return s, true
}

// summary is the diagnosis in one line.
func summary(d doctor.Diagnosis) string {
	if d.Healthy {
		for _, f := range d.Findings {
			if f.Code == doctor.Healthy || f.Code == doctor.NoPeers {
				return f.Message
			}
		}
		return "no problem found"
	}
	return "likely cause: " + d.Cause
}

// Run reads every interval until ctx ends; a read that overruns the
// interval is followed at once by the next.
func (m *Monitor) Run(ctx context.Context) {
	for ctx.Err() == nil {
		start := time.Now()
		m.ReadOnce(ctx)
		select {
		case <-ctx.Done():
		case <-time.After(time.Until(start.Add(m.o.Interval))):
		}
	}
}

// Handler serves /metrics, /healthz and the status page at /.
func (m *Monitor) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}))
	mux.HandleFunc("GET /healthz", m.healthz)
	mux.HandleFunc("GET /{$}", m.page)
	return mux
}

// healthz says whether harp itself reads: 200 while reads finish on time,
// 503 before the first and once they stop. The cluster's health is in the
// metrics and the page, not here.
func (m *Monitor) healthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	s := m.Last()
	if s == nil {
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintln(w, "no read finished yet")
		return
	}
	age := time.Since(s.Start.Add(s.Took))
	if stale := 2*m.o.Interval + m.o.Timeout; age > stale {
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintf(w, "the last read finished %s ago, more than %s: reads are stuck\n", age.Round(time.Second), stale)
		return
	}
	fmt.Fprintf(w, "ok: read %d finished %s ago\n", s.N, age.Round(time.Millisecond))
}

// Serve runs the reads and serves ln until ctx ends, then stops serving
// within a few seconds; it returns an error only when serving failed.
func (m *Monitor) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{Handler: m.Handler(), ReadHeaderTimeout: 10 * time.Second, WriteTimeout: time.Minute, IdleTimeout: 2 * time.Minute}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	rctx, stop := context.WithCancel(ctx)
	defer stop()
	ran := make(chan struct{})
	go func() { m.Run(rctx); close(ran) }()
	var err error
	select {
	case <-ctx.Done():
	case err = <-served:
		err = fmt.Errorf("serving %s: %w", ln.Addr(), err)
	}
	stop()
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if serr := srv.Shutdown(sctx); serr != nil && !errors.Is(serr, http.ErrServerClosed) && err == nil {
		srv.Close()
	}
	<-ran
	return err
}

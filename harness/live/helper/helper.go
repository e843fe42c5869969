// Package helper makes one binary its own helper commands in containers:
// the link proxy that peers clusters route their links through, and the
// slow HTTP backend of the listener suites. Copied into an image as
// /linkproxy or /slowbackend, a binary whose main calls Run runs that
// helper, by the name it was started as: harp needs no source tree and no
// Go toolchain to make those images.
//
// The link proxy is toxiproxy's server on a peers cluster's network: harp
// routes each directed peer link through one of its proxies and degrades
// links through its API (port 8474). Behind each toxiproxy proxy sits a
// plain forwarder of harp's own (API on port 8475) that passes each
// direction's end on as a half-close (FIN), and can half-close a link's
// connections on demand: toxiproxy closes a whole socket when one
// direction ends, so it cannot.
package helper

import (
	"encoding/json"
	"flag"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/Shopify/toxiproxy/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/harp-project/harp/harness/live/slowhttp"
)

// The helpers' names: the base name a binary is started as in its image.
const (
	LinkProxy   = "linkproxy"
	SlowBackend = "slowbackend"
)

var carried bool

// Run runs the helper the process was started as, and exits; for any
// other name it returns, and Carried is true from then on.
func Run() {
	switch filepath.Base(os.Args[0]) {
	case LinkProxy:
		linkProxy()
		os.Exit(0)
	case SlowBackend:
		slowBackend(os.Args[1:])
		os.Exit(0)
	}
	carried = true
}

// Carried says whether this binary carries the helpers (its main called
// Run): their images are then made of the binary itself.
func Carried() bool { return carried }

// Main runs one helper by name (cmd/linkproxy, cmd/slowbackend).
func Main(name string) {
	switch name {
	case LinkProxy:
		linkProxy()
	case SlowBackend:
		slowBackend(os.Args[1:])
	}
}

// slowBackend is harp's slow HTTP backend (harness/live/slowhttp).
func slowBackend(args []string) {
	fs := flag.NewFlagSet(SlowBackend, flag.ExitOnError)
	listen := fs.String("listen", ":8080", "address to serve on")
	service := fs.Duration("service", 100*time.Millisecond, "time each request takes")
	serial := fs.Bool("serial", true, "serve one request at a time")
	fast := fs.Bool("fast", false, "answer at once, in parallel")
	fs.Parse(args)
	h := slowhttp.New(slowhttp.Options{Service: *service, Serial: *serial, Fast: *fast})
	log.Printf("slowbackend on %s: service %s serial=%v fast=%v", *listen, *service, *serial, *fast)
	log.Fatal(http.ListenAndServe(*listen, h))
}

// linkProxy is toxiproxy's server (API on port 8474) beside harp's
// forwarders (API on port 8475); it runs until SIGTERM or SIGINT.
func linkProxy() {
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	go func() { <-stop; os.Exit(0) }()
	f := &forwarders{byName: map[string]*forwarder{}}
	go func() { log.Fatal(http.ListenAndServe("0.0.0.0:8475", f)) }()
	logger := zerolog.New(os.Stderr).Level(zerolog.WarnLevel).With().Timestamp().Logger()
	server := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), logger)
	server.Listen("0.0.0.0", "8474")
}

// forwarder passes connections from its listener to upstream, each
// direction on its own, an end passed on as CloseWrite.
type forwarder struct {
	upstream string
	mu       sync.Mutex
	pairs    []*pair
}

// pair is one forwarded connection: from the client, to upstream.
type pair struct{ client, up *net.TCPConn }

type forwarders struct {
	mu     sync.Mutex
	byName map[string]*forwarder
}

// ServeHTTP: POST /forward {name, listen, upstream} makes a forwarder;
// POST /halfclose {name, direction} half-closes its connections: toward
// upstream ("upstream": upstream reads a FIN) or toward the client
// ("downstream").
func (fs *forwarders) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct{ Name, Listen, Upstream, Direction string }
	if r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&req) != nil || req.Name == "" {
		http.Error(w, "POST /forward or /halfclose with a JSON body naming the link", http.StatusBadRequest)
		return
	}
	switch r.URL.Path {
	case "/forward":
		ln, err := net.Listen("tcp", req.Listen)
		if err != nil {
			http.Error(w, err.Error(), http.StatusConflict)
			return
		}
		f := &forwarder{upstream: req.Upstream}
		fs.mu.Lock()
		fs.byName[req.Name] = f
		fs.mu.Unlock()
		go f.serve(ln)
	case "/halfclose":
		fs.mu.Lock()
		f := fs.byName[req.Name]
		fs.mu.Unlock()
		if f == nil {
			http.Error(w, "no link "+req.Name, http.StatusNotFound)
			return
		}
		n := f.halfClose(req.Direction == "downstream")
		json.NewEncoder(w).Encode(map[string]int{"connections": n})
		return
	default:
		http.NotFound(w, r)
		return
	}
	w.WriteHeader(http.StatusCreated)
}

func (f *forwarder) serve(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go f.forward(c.(*net.TCPConn))
	}
}

func (f *forwarder) forward(client *net.TCPConn) {
	defer client.Close()
	c, err := net.Dial("tcp", f.upstream)
	if err != nil {
		return
	}
	up := c.(*net.TCPConn)
	defer up.Close()
	p := &pair{client, up}
	f.mu.Lock()
	f.pairs = append(f.pairs, p)
	f.mu.Unlock()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { pass(up, client); wg.Done() }()
	go func() { pass(client, up); wg.Done() }()
	wg.Wait()
	f.mu.Lock()
	for i, q := range f.pairs {
		if q == p {
			f.pairs = append(f.pairs[:i], f.pairs[i+1:]...)
			break
		}
	}
	f.mu.Unlock()
}

// pass copies one direction and passes its end on as it came: a FIN as a
// FIN (the other way stays open), a reset as a reset.
func pass(dst, src *net.TCPConn) {
	if _, err := io.Copy(dst, src); err != nil {
		dst.SetLinger(0)
		dst.Close()
		return
	}
	dst.CloseWrite()
}

// halfClose sends a FIN one way on every open connection of the link; the
// other way stays open.
func (f *forwarder) halfClose(downstream bool) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, p := range f.pairs {
		if downstream {
			p.client.CloseWrite()
		} else {
			p.up.CloseWrite()
		}
	}
	return len(f.pairs)
}

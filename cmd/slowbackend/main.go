// Command slowbackend is harp's slow HTTP backend (see harness/backend),
// shipped as its own small image for the listener suites.
package main

import (
	"flag"
	"log"
	"net/http"
	"time"

	"github.com/harp-project/harp/harness/slowhttp"
)

func main() {
	listen := flag.String("listen", ":8080", "address to serve on")
	service := flag.Duration("service", 100*time.Millisecond, "time each request takes")
	serial := flag.Bool("serial", true, "serve one request at a time")
	fast := flag.Bool("fast", false, "answer at once, in parallel")
	flag.Parse()
	h := slowhttp.New(slowhttp.Options{Service: *service, Serial: *serial, Fast: *fast})
	log.Printf("slowbackend on %s: service %s serial=%v fast=%v", *listen, *service, *serial, *fast)
	log.Fatal(http.ListenAndServe(*listen, h))
}

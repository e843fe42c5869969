// Package progress prints what harp is doing to stderr, with a heartbeat
// for anything slow, so a user never stares at a silent terminal.
package progress

import (
	"fmt"
	"os"
	"sync"
	"time"
)

var mu sync.Mutex

// Heartbeat is how often a running step says it is still running.
var Heartbeat = 15 * time.Second

// Printf writes one progress line.
func Printf(format string, args ...any) {
	mu.Lock()
	defer mu.Unlock()
	fmt.Fprintf(os.Stderr, "[harp %s] %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

// Start announces a step and returns the function that closes it; while the
// step runs a heartbeat line is printed every Heartbeat.
func Start(format string, args ...any) func(error) {
	return StartWith(nil, format, args...)
}

// StartWith is Start with a status function whose answer (e.g. "120 of
// 260 objects") is added to each heartbeat.
func StartWith(status func() string, format string, args ...any) func(error) {
	what := fmt.Sprintf(format, args...)
	Printf("%s ...", what)
	t0 := time.Now()
	stop := make(chan struct{})
	go func() {
		tk := time.NewTicker(Heartbeat)
		defer tk.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tk.C:
				extra := ""
				if status != nil {
					extra = ", " + status()
				}
				Printf("  still %s (%s%s)", what, time.Since(t0).Round(time.Second), extra)
			}
		}
	}()
	var once sync.Once
	return func(err error) {
		once.Do(func() {
			close(stop)
			if err != nil {
				Printf("%s: failed after %s", what, time.Since(t0).Round(100*time.Millisecond))
				return
			}
			Printf("%s: done in %s", what, time.Since(t0).Round(100*time.Millisecond))
		})
	}
}

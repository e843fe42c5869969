package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/harp-project/harp/harness/ops/doctor"
	"github.com/harp-project/harp/harness/ops/monitor"
)

// multi is a repeatable flag.
type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(v string) error { *m = append(*m, v); return nil }

// cmdDoctor diagnoses replication between live instances from their
// runtime sockets. Exit status: 0 healthy, 1 problems found, 3 when a
// socket cannot be reached or an answer (a table) is too large to read:
// the diagnosis is partial.
func cmdDoctor(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("doctor", flag.ContinueOnError)
	var sockets, names multi
	fs.Var(&sockets, "socket", "runtime socket of an instance: a path (UNIX socket) or host:port; repeat for each instance")
	fs.Var(&names, "name", "a name for each --socket, in the same order (default: the socket)")
	asJSON := fs.Bool("json", false, "print the diagnosis as JSON (for monitoring)")
	timeout := fs.Duration("timeout", 30*time.Second, "deadline for reading every socket (they are read at the same time)")
	settle := fs.Duration("settle", 10*time.Second, "while the only problems are links down or tables diverging, read again each second for up to this long before calling them problems (0: one read)")
	watch := fs.Bool("watch", false, "keep reading every --interval and serve the diagnosis: /metrics (Prometheus), /healthz and a status page at /")
	listen := fs.String("listen", monitor.DefaultListen, "with --watch: host:port to serve on (loopback unless given; port 0 picks a free one)")
	interval := fs.Duration("interval", 15*time.Second, "with --watch: how often every socket is read, 1s to 1h (each read within --timeout or the interval, the shorter)")
	if !flags(fs, args) {
		return 3
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if len(sockets) == 0 {
		return fail("doctor: give at least one --socket (path or host:port), one per instance")
	}
	if len(names) > 0 && len(names) != len(sockets) {
		return fail("doctor: %d --name for %d --socket", len(names), len(sockets))
	}
	if len(names) == 0 {
		names = sockets
	}
	if err := checkSettle(*settle); err != nil {
		return fail("doctor: %v", err)
	}
	if err := checkWatchFlags(*watch, set); err != nil {
		return fail("doctor: %v", err)
	}
	if *watch {
		if err := checkWatch(*listen, *interval, *timeout, names); err != nil {
			return fail("doctor: %v", err)
		}
	}
	for _, s := range sockets {
		if err := doctor.CheckSocket(s); err != nil {
			return fail("doctor: --socket %v", err)
		}
	}
	if *watch {
		return watchDoctor(ctx, *listen, monitor.Options{Names: names, Sockets: sockets, Interval: *interval, Timeout: *timeout})
	}
	// One memory budget for every read of the run: sockets that stream
	// without end are refused, not read until harp runs out of memory.
	read := doctor.Reader(*timeout, names, sockets, doctor.NewBudget(doctor.RunBudget))
	// HAProxy re-establishes a peer session within seconds: one read that
	// shows a link down or entries in flight is not yet a finding.
	d := doctor.Settle(ctx, doctor.Diagnose(read(ctx)), *settle, time.Second, read, func(msg string) {
		fmt.Fprintf(os.Stderr, "harp: doctor: %s\n", msg)
	})
	ins := d.Instances
	if *asJSON {
		out, _ := json.MarshalIndent(d, "", "  ")
		fmt.Println(string(out))
	} else {
		fmt.Print(d.Text())
	}
	if d.Has(doctor.Unreachable) || d.Has(doctor.TooLarge) {
		for _, in := range ins {
			if in.Unreachable != "" {
				fmt.Fprintf(os.Stderr, "harp: doctor: %s\n", in.Unreachable)
			}
		}
		for _, f := range d.Findings {
			if f.Code == doctor.TooLarge {
				fmt.Fprintf(os.Stderr, "harp: doctor: %s\n", f.Message)
			}
		}
		return 3 // an instance or a table could not be read: the diagnosis is partial
	}
	if !d.Healthy {
		return 1
	}
	return 0
}

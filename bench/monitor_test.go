package bench

import (
	"context"
	"fmt"
	"io"
	"net/http/httptest"
	"runtime"
	"runtime/metrics"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/harp-project/harp/harness/core/cliout"
	"github.com/harp-project/harp/harness/live/cli"
	"github.com/harp-project/harp/harness/live/cluster"
	"github.com/harp-project/harp/harness/live/node"
	"github.com/harp-project/harp/harness/ops/doctor"
	"github.com/harp-project/harp/harness/ops/monitor"
)

// monitorEntries is the table size of the monitor row: 3 instances with
// this many entries each.
const monitorEntries = 100_000

// monitor measures what one scrape of harp doctor --watch costs on a real
// 3-node 3.4.7 cluster whose table holds 100,000 entries on every node:
// its time and the heap it takes, each as a ratio to one `show table`
// dump of that table (its time to read, its size in bytes), beside the
// one-shot doctor's read, which parses every entry.
func (x *bench) monitor() {
	ctx, cancel := context.WithTimeout(x.ctx, 15*time.Minute)
	defer cancel()
	img := x.image(buggy)
	c, err := cluster.Start(ctx, x.docker, cluster.Options{Image: img, RunID: x.runID,
		Tables: []cluster.Table{{Name: "tbl", Type: "string len 32", Store: "gpc0,http_req_cnt", Size: "200k"}}})
	if err != nil {
		x.b.Fatal(err)
	}
	defer c.StopWithin(x.ctx, time.Minute)
	if err := c.WaitSockets(ctx, 30*time.Second); err != nil {
		x.b.Fatal(err)
	}
	if down := c.WaitMesh(ctx, cluster.MeshTimeout); down != "" {
		x.b.Fatal(down)
	}
	var names, socks []string
	for _, m := range c.Members {
		addr, err := m.Node.Addr(ctx, node.StatsPort)
		if err != nil {
			x.b.Fatal(err)
		}
		names, socks = append(names, m.Name), append(socks, addr)
	}
	t0 := time.Now()
	if err := fill(ctx, socks[0], cluster.DefaultTable, monitorEntries); err != nil {
		x.b.Fatal(err)
	}
	if err := everywhere(ctx, socks, cluster.DefaultTable, monitorEntries); err != nil {
		x.b.Fatal(err)
	}
	progress("monitor: %d entries on each of 3 nodes (%.1f s)", monitorEntries, time.Since(t0).Seconds())

	var dumpTook []time.Duration
	var dumpBytes int64
	for range 3 {
		t, n, err := dump(ctx, socks[0], cluster.DefaultTable)
		if err != nil {
			x.b.Fatal(err)
		}
		dumpTook, dumpBytes = append(dumpTook, t), n
	}
	dumpT := median(dumpTook)

	// One scrape of the monitor: a read (contents streamed into digests),
	// its diagnosis, and /metrics rendered. First, so that the
	// one-shot read's heap does not set the collector's pace for it.
	m := monitor.New(monitor.Options{Names: names, Sockets: socks, Interval: time.Minute})
	h := m.Handler()
	// Each run checks its diagnosis and keeps nothing of it: what one run
	// held must not be live when the next one's heap is measured.
	check := func(how string, d doctor.Diagnosis) {
		if !d.Healthy || len(d.Tables) != 1 || d.Tables[0].Keys != monitorEntries || d.Tables[0].Diverging != 0 {
			x.b.Errorf("%s of 3 x %d entries: healthy %v, %+v", how, monitorEntries, d.Healthy, d.Findings)
		}
	}
	scrapeT, scrapeHeap := measure(3, func() {
		s, _ := m.ReadOnce(ctx)
		rr := httptest.NewRecorder()
		h.ServeHTTP(rr, httptest.NewRequest("GET", "/metrics", nil))
		io.Copy(io.Discard, rr.Body)
		check("the watch scrape", s.D)
	})
	// The one-shot doctor: every answer read whole, every entry parsed.
	wholeT, wholeHeap := measure(3, func() {
		check("the one-shot doctor", doctor.Diagnose(doctor.CollectAll(ctx, time.Minute, names, socks, doctor.Dial)))
	})
	mib := func(n uint64) float64 { return float64(n) / (1 << 20) }
	x.say("Monitoring (harp doctor --watch) on a 3-node 3.4.7 cluster, %d entries in its table on every node; ratios to one `show table` dump of that table on one node (%.2f s, %.1f MiB; median of 3):\n", monitorEntries, dumpT.Seconds(), mib(uint64(dumpBytes)))
	x.say("| read of 3 instances | time | time / one dump | peak heap | heap / one dump |")
	x.say("|---|---|---|---|---|")
	x.say("| one-shot `harp doctor` (every entry parsed) | %.2f s | %.1fx | %.1f MiB | %.1fx |", wholeT.Seconds(), wholeT.Seconds()/dumpT.Seconds(), mib(wholeHeap), float64(wholeHeap)/float64(dumpBytes))
	x.say("| `--watch` scrape (streamed into digests, /metrics rendered) | %.2f s | %.1fx | %.1f MiB | %.2fx |", scrapeT.Seconds(), scrapeT.Seconds()/dumpT.Seconds(), mib(scrapeHeap), float64(scrapeHeap)/float64(dumpBytes))
	x.say("")
	x.b.ReportMetric(scrapeT.Seconds()/dumpT.Seconds(), "scrape-time/dump")
	x.b.ReportMetric(float64(scrapeHeap)/float64(dumpBytes), "scrape-heap/dump")
	progress("monitor: one dump %.2f s %.1f MiB; one-shot doctor %.2f s %.1f MiB; watch scrape %.2f s %.1f MiB",
		dumpT.Seconds(), mib(uint64(dumpBytes)), wholeT.Seconds(), mib(wholeHeap), scrapeT.Seconds(), mib(scrapeHeap))
}

// fill writes n keys on a node's runtime socket, many commands a line
// (the CLI runs commands separated by ';'; a line stays under its 16 KiB
// buffer).
func fill(ctx context.Context, sock, table string, n int) error {
	const per = 150
	for i := 0; i < n; i += per {
		var b strings.Builder
		for j := i; j < min(i+per, n); j++ {
			if j > i {
				b.WriteString(";")
			}
			fmt.Fprintf(&b, "set table %s key k%06d data.gpc0 %d", table, j, j%7)
		}
		out, err := cli.Ask(ctx, "tcp", sock, b.String())
		if err != nil {
			return fmt.Errorf("filling %s: %w", table, err)
		}
		if strings.TrimSpace(out) != "" {
			return fmt.Errorf("filling %s: HAProxy said %q", table, firstLine(out))
		}
	}
	return nil
}

func firstLine(s string) string { l, _, _ := strings.Cut(strings.TrimSpace(s), "\n"); return l }

// everywhere waits until every node's table holds n entries (replication).
func everywhere(ctx context.Context, socks []string, table string, n int) error {
	var used []int
	err := node.Poll(ctx, 3*time.Minute, 500*time.Millisecond, func() (bool, error) {
		used = used[:0]
		for _, s := range socks {
			out, err := cli.Ask(ctx, "tcp", s, "show table")
			if err != nil {
				return false, nil
			}
			ts, _ := cliout.ParseTables(out)
			u := -1
			for _, t := range ts {
				if t.Name == table {
					u = t.Used
				}
			}
			used = append(used, u)
		}
		for _, u := range used {
			if u != n {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("%s never held %d entries on every node (used: %v): %w", table, n, used, err)
	}
	return nil
}

// dump reads one show table dump whole and drops it: its time and size.
func dump(ctx context.Context, sock, table string) (time.Duration, int64, error) {
	var n int64
	t0 := time.Now()
	_, err := cli.AskWith(ctx, "tcp", sock, "show table "+table, func(r io.Reader) (string, error) {
		var err error
		n, err = io.Copy(io.Discard, r)
		return "", err
	})
	return time.Since(t0), n, err
}

// measure runs f k times: the median time, and the most heap any run held
// above what was live before it (sampled each millisecond; garbage not yet
// collected counts, as it does for the process).
func measure(k int, f func()) (time.Duration, uint64) {
	var took []time.Duration
	var peak uint64
	for range k {
		runtime.GC()
		base := heap()
		var top uint64
		var wg sync.WaitGroup
		done := make(chan struct{})
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				if h := heap(); h > top {
					top = h
				}
				select {
				case <-done:
					return
				case <-time.After(time.Millisecond):
				}
			}
		}()
		t0 := time.Now()
		f()
		took = append(took, time.Since(t0))
		close(done)
		wg.Wait()
		if h := heap(); h > top {
			top = h
		}
		if top > base && top-base > peak {
			peak = top - base
		}
	}
	return median(took), peak
}

func heap() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

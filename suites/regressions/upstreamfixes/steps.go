package upstreamfixes

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/harp-project/harp/harness/cli"
	"github.com/harp-project/harp/harness/cliout"
	"github.com/harp-project/harp/harness/node"
	"github.com/harp-project/harp/suites/regressions/upstreamfixes/judge"
)

// drives run the steps cases: several exchanges (counts before and
// after, a connection's fate over time), composed into one answer; an
// error is harp's failure to observe.
var drives = map[string]func(context.Context, *node.Node) (string, error){
	"cli-quit-releases-its-buffer":            quitLeak,
	"expired-entries-all-purged":              purge,
	"cli-idle-prompt-closed-on-timeout":       idleClose,
	"sc-generic-fetch-counter-above-9":        get8082("/"),
	"idle-worker-after-entries-expired":       idleAfterExpiry,
	"idle-worker-with-entry-in-use":           idleHeld,
	"show-fd-type-then-number":                showFD("l ", ""),
	"show-fd-any-group-form":                  showFD("", "/"),
	"string-key-with-nul-one-entry":           nulKey,
	"frontend-full-then-rate-limited-resumes": fullThenLimited,
}

// fdLineRe is a show fd line's fd.
var fdLineRe = regexp.MustCompile(`(?m)^\s*(\d+)\s*:`)

// quitLeak counts the trash pool's used buffers around judge.Quits connections
// that send only quit.
func quitLeak(ctx context.Context, n *node.Node) (string, error) {
	before, err := n.Pool(ctx, node.StatsSocket, "trash")
	if err != nil {
		return "", err
	}
	for i := range judge.Quits {
		if _, err := n.Raw(ctx, node.StatsPort, "quit\n", cli.RawOptions{Wait: answerWait}); err != nil {
			return "", fmt.Errorf("quit %d: %w", i+1, err)
		}
	}
	after, err := n.Pool(ctx, node.StatsSocket, "trash")
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("trash used %d -> %d after %d quit", before.Used, after.Used, judge.Quits), nil
}

// purge fills tpurge, blocks the worker past the entries' expiry and
// polls the table until empty.
func purge(ctx context.Context, n *node.Node) (string, error) {
	const perLine = 50 // lines of under 2 KB: 2.9.0 dropped some of 10 KB
	for k := 0; k < judge.PurgeKeys; k += perLine {
		var b strings.Builder
		for i := k; i < k+perLine; i++ {
			fmt.Fprintf(&b, "set table tpurge key p%d data.gpc0 1;", i)
		}
		b.WriteString("\n")
		if _, err := n.Raw(ctx, node.StatsPort, b.String(), cli.RawOptions{Wait: answerWait}); err != nil {
			return "", fmt.Errorf("filling tpurge: %w", err)
		}
	}
	used := func() (int, error) {
		// The list of tables, never a dump of tpurge: a dump kills the
		// expired entries it walks, orphans included.
		t, err := n.ListedTable(ctx, node.StatsSocket, "tpurge")
		return t.Used, err
	}
	filled, err := used()
	if err != nil {
		return "", err
	}
	if filled < judge.PurgeKeys*3/4 {
		// Filling took near the expire: too few expire together.
		return "", fmt.Errorf("tpurge holds %d entries after %d were set", filled, judge.PurgeKeys)
	}
	if _, err := n.Raw(ctx, node.StatsPort, "expert-mode on; debug dev delay 8500\n", cli.RawOptions{Wait: answerWait}); err != nil {
		return "", fmt.Errorf("debug dev delay: %w", err)
	}
	left, err := node.UntilErr(ctx, 10*time.Second, 200*time.Millisecond, used, func(left int) bool { return left == 0 })
	if err != nil && !errors.Is(err, node.ErrDeadline) {
		return "", fmt.Errorf("reading tpurge after the delay: %w", err)
	}
	return fmt.Sprintf("tpurge used %d -> %d within 10s after the delay", filled, left), nil
}

// idleClose: an interactive session given a 1s timeout, then idle.
func idleClose(ctx context.Context, n *node.Node) (string, error) {
	conn, err := n.Dial(ctx, node.StatsPort)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("prompt\nset timeout cli 1\n")); err != nil {
		return "", fmt.Errorf("sending: %w", err)
	}
	start := time.Now()
	got, err := cli.ReadToClose(conn, 6*time.Second)
	switch {
	case cli.Timeout(err) && len(got) == 0:
		return "", fmt.Errorf("no answer to prompt within 6s")
	case cli.Timeout(err):
		return fmt.Sprintf("still open after 6s (answered %q)", got), nil
	}
	return fmt.Sprintf("closed by haproxy after %.1fs", time.Since(start).Seconds()), nil
}

// get8082 sends one request to the node's 8082: its status line.
func get8082(path string) func(context.Context, *node.Node) (string, error) {
	return func(ctx context.Context, n *node.Node) (string, error) {
		resp, err := n.Get(ctx, "8082/tcp", path, 5*time.Second)
		if err != nil {
			// Unknown, unless run then finds the worker dead: a slow
			// answer is never the bug's.
			return "", fmt.Errorf("the request: %w", err)
		}
		return strconv.Itoa(resp.StatusCode), nil
	}
}

// loopRate: show activity's loop count 2s apart, per second.
func loopRate(ctx context.Context, n *node.Node) (string, error) {
	r, err := n.LoopRate(ctx, node.StatsSocket, 2*time.Second)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%d loops/s", r), nil
}

// idleAfterExpiry waits for the worker's clock to wrap, lets an entry
// expire, then measures the loop rate.
func idleAfterExpiry(ctx context.Context, n *node.Node) (string, error) {
	err := node.Poll(ctx, (judge.Wrapped+10)*time.Second, 500*time.Millisecond, func() (bool, error) {
		info, err := n.Info(ctx, node.StatsSocket)
		return err == nil && info.Int("Uptime_sec") >= judge.Wrapped, err
	})
	if err != nil {
		return "", fmt.Errorf("waiting for the worker to be up %ds: %w", judge.Wrapped, err)
	}
	if _, err := n.Raw(ctx, node.StatsPort, "set table tshort key gone data.gpc0 1\n", cli.RawOptions{Wait: answerWait}); err != nil {
		return "", err
	}
	if err := n.WaitTableUsed(ctx, node.StatsSocket, "tshort", 0, 10*time.Second); err != nil {
		return "", fmt.Errorf("waiting for tshort to be empty: %w", err)
	}
	return loopRate(ctx, n)
}

// idleHeld holds a connection tracked in tshort past the entry's expire.
func idleHeld(ctx context.Context, n *node.Node) (string, error) {
	conn, err := n.Dial(ctx, "8083/tcp")
	if err != nil {
		return "", err
	}
	defer conn.Close()
	if err := n.WaitTableUsed(ctx, node.StatsSocket, "theld", 1, 5*time.Second); err != nil {
		return "", fmt.Errorf("the held connection was never tracked: %w", err)
	}
	time.Sleep(3 * time.Second) // past the entry's expire: the trigger
	rate, err := loopRate(ctx, n)
	if err != nil {
		return "", err
	}
	conn.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
	if _, err := conn.Read(make([]byte, 1)); err == io.EOF {
		return "", fmt.Errorf("HAProxy closed the held connection before the measure ended")
	}
	return rate, nil
}

// showFD finds a listener's fd, then asks `show fd <filter><prefix><fd>`.
func showFD(filter, prefix string) func(context.Context, *node.Node) (string, error) {
	return func(ctx context.Context, n *node.Node) (string, error) {
		out, err := n.Stats(ctx, "show fd l")
		if err != nil {
			return "", err
		}
		m := fdLineRe.FindStringSubmatch(out)
		if m == nil {
			return "", fmt.Errorf("show fd l lists no listener: %q", judge.OneLine(out))
		}
		one, err := n.Stats(ctx, "show fd "+filter+prefix+m[1])
		if err != nil {
			return "", err
		}
		return "fd " + m[1] + "\n" + one, nil
	}
}

// nulKeys: with 3.0's 16 buckets a key and the same with a NUL and more
// bytes after it land apart 15 times in 16; four keys make a miss rare.
var nulKeys = []string{"AB", "CD", "EF", "GH"}

// nulKey: each key with an embedded NUL, then without it.
func nulKey(ctx context.Context, n *node.Node) (string, error) {
	for _, k := range nulKeys {
		for _, p := range []string{"/?q=" + k + "%00zz", "/?q=" + k} {
			if _, err := n.Get(ctx, "8083/tcp", p, 5*time.Second); err != nil {
				return "", fmt.Errorf("GET %s: %w", p, err)
			}
		}
	}
	t, err := n.Table(ctx, node.StatsSocket, "tnul")
	if err != nil {
		return "", err
	}
	seen := map[string]int{}
	for _, e := range t.Entries {
		seen[e.Key]++
	}
	var twice []string
	for _, k := range nulKeys {
		if seen[k] == 0 {
			return "", fmt.Errorf("key %s was never tracked in tnul", k)
		}
		if seen[k] > 1 {
			twice = append(twice, k)
		}
	}
	return fmt.Sprintf("keys listed more than once: %d %v", len(twice), twice), nil
}

// fullThenLimited: A fills the frontend; B waits in the backlog; A leaves
// while the session rate is still at its limit.
func fullThenLimited(ctx context.Context, n *node.Node) (string, error) {
	a, err := n.Dial(ctx, "8084/tcp")
	if err != nil {
		return "", fmt.Errorf("A: %w", err)
	}
	defer a.Close()
	conns := func() (int64, error) {
		rows, err := n.Stat(ctx, node.StatsSocket)
		if err != nil {
			return 0, err
		}
		fe, ok := cliout.FindStat(rows, "limited", "FRONTEND")
		if !ok {
			return 0, fmt.Errorf("no frontend limited in show stat")
		}
		return fe.Int("scur"), nil
	}
	if _, err := node.UntilErr(ctx, 5*time.Second, 50*time.Millisecond, conns, func(c int64) bool { return c == 1 }); err != nil {
		return "", fmt.Errorf("A was never accepted: %w", err)
	}
	b, err := n.Dial(ctx, "8084/tcp")
	if err != nil {
		return "", fmt.Errorf("B: %w", err)
	}
	defer b.Close()
	if _, err := b.Write([]byte("GET / HTTP/1.0\r\n\r\n")); err != nil {
		return "", fmt.Errorf("B's request: %w", err)
	}
	time.Sleep(100 * time.Millisecond) // B reaches the listener, which stops accepting: the trigger's order
	a.Close()
	start := time.Now()
	got, _ := cli.ReadToClose(b, 6*time.Second)
	if strings.HasPrefix(string(got), "HTTP/1.") {
		return fmt.Sprintf("answered after %.1fs", time.Since(start).Seconds()), nil
	}
	c, err := conns()
	if err != nil {
		return "", fmt.Errorf("B unanswered, and show stat after it: %w", err)
	}
	return fmt.Sprintf("B unanswered after 6s (%q), frontend sessions %d", got, c), nil
}

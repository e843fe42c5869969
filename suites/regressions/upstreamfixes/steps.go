package upstreamfixes

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/harp-project/harp/harness/cliout"
	"github.com/harp-project/harp/harness/node"
)

// The cases that take several steps (counts before and after, a
// connection's fate over time), or a node of their own.

var stepCases = []Case{
	{ID: "exec-thread-groups-master-cli", Fix: "a053512a7f48", Since: "2.8", Kind: Exec, Args: []string{"-W", "-db", "-S", "ipv4@127.0.0.1:19999", "-f", "{cfg}"},
		Config: strings.Replace(unbindable, "    nbthread 1\n", "    nbthread 2\n    thread-groups 2\n", 1),
		Does:   "a master-worker start with a master CLI (`-S`) of a config with `thread-groups 2` (a bind across groups: 2.8) whose one bind fails, so that it ends by itself", Expects: "it ends on the failed bind (a status under 128), not on a signal",
		Want: func(a string) (bool, string) {
			code, err := strconv.Atoi(strings.TrimPrefix(strings.SplitN(a, "\n", 2)[0], "exit "))
			return err == nil && code >= 0 && code < 128, "the master-worker start ended on a signal (" + oneLine(a) + ")"
		}},
	{ID: "cli-pipelined-then-close-all-run", Fix: "2d7e3ddd4a28", Kind: Stats, Direct: true, Abort: true, Send: pipelined, Then: "show table tpipe",
		Does: fmt.Sprintf("%d `set table tpipe key 10.1.0.<n> data.gpc0 1` joined by `;` in one write on the node's own address, then the client's end and close without reading", pipes), Expects: fmt.Sprintf("all %d entries in `show table tpipe`", pipes),
		Want: func(a string) (bool, string) {
			_, after, _ := strings.Cut(a, "\n--- then\n")
			k := strings.Count(after, " key=10.1.0.")
			return k == pipes, fmt.Sprintf("a close right after pipelined commands stopped them: %d of %d ran", k, pipes)
		}},
	{ID: "cli-error-ends-with-empty-line", Fix: "6219a58d2850", Kind: Stats, Send: "show events harp-nosuch\n",
		Does: "`show events harp-nosuch` (no such sink)", Expects: "the error with its own line feed, then the empty line that ends every answer",
		Want: func(a string) (bool, string) {
			return strings.HasSuffix(a, "\n\n"), fmt.Sprintf("the error %q lacks its line feed, so no empty line ends the answer (a prompt-mode client waits for ever)", a)
		}},
	{ID: "cli-quit-releases-its-buffer", Fix: "e63e98f1d835", Kind: Steps, Drive: quitLeak,
		Does: fmt.Sprintf("%d connections to the stats socket that send only `quit`, `show pools` before and after", quits), Expects: "the trash pool's used count grows by less than half of that",
		Want: func(a string) (bool, string) {
			before, after, ok := counts(a, poolCountsRe)
			return ok && after-before < quits/2, fmt.Sprintf("each `quit` kept a buffer (%s)", a)
		}},
	{ID: "expired-entries-all-purged", Fix: "8da6ed6b6aec", Kind: Steps, Drive: purge,
		Does: fmt.Sprintf("%d entries in table `tpurge` (expire 8s) by `set table`, then `debug dev delay 8500` (expert mode) so that all expire at once", purgeKeys), Expects: "`show table tpurge` empty within 10s",
		Want: func(a string) (bool, string) {
			_, after, ok := counts(a, purgeCountsRe)
			return ok && after == 0, fmt.Sprintf("expired entries outlived the expire task (%s)", a)
		}},
	{ID: "listener-shards-distinct-ids", Fix: "0db8b6034d87", Kind: Stats, Send: "show stat\n", Node: shardsNode,
		Does: "`show stat` on a node of its own (nbthread 4) whose frontend `fe` has binds `id 100` and `id 200` of 4 shards each, with `option socket-stats`", Expects: "8 listener rows of fe, no two with the same name or id",
		Want: distinctListeners("fe", 8)},
	{ID: "listener-shards-close-ids-distinct", Fix: "dd49f1ee6230", Kind: Stats, Send: "show stat\n", Node: shardsNode,
		Does: "`show stat` on the same kind of node, frontend `fe2`: binds `id 10` and `id 12` of 4 shards each, and one without an id", Expects: "9 listener rows of fe2, no two with the same id",
		Want: distinctListeners("fe2", 9)},
	{ID: "cli-idle-prompt-closed-on-timeout", Fix: "101cc4f3340a", Kind: Steps, Drive: idleClose,
		Does: "`prompt` then `set timeout cli 1` on the stats socket, then nothing", Expects: "HAProxy closes the connection within 6s",
		Want: startsWith("closed by haproxy", "an idle interactive session outlived its timeout")},
	{ID: "sc-generic-fetch-counter-above-9", Fix: "0e6f968ee379", Since: "2.8", Kind: Steps, Drive: get8082("/"), Node: counterNode, NodePorts: []string{"8082/tcp"},
		Does: "a request on a node of its own (`tune.stick-counters 11`) tracked by `track-sc10`, read by `sc_gpc_rate(0,10,rate_table)`", Expects: "answered, the worker alive",
		Want: startsWith("200", "the request was not answered")},
	{ID: "idle-worker-after-entries-expired", Fix: "dfe866fa9866", Kind: Steps, Drive: idleAfterExpiry, Node: idleNode,
		Does: fmt.Sprintf("a node of its own, up %ds (past the wrap of HAProxy's internal clock), with one entry in table `tshort` (expire 1s); once `show table tshort` is empty: `show activity` twice 2s apart", wrapped), Expects: fmt.Sprintf("fewer than %d poll loops per second", busyLoops),
		Want: idle},
	{ID: "idle-worker-with-entry-in-use", Fix: "993c09438ba9", Kind: Steps, Drive: idleHeld, Node: idleNode, NodePorts: []string{"8083/tcp"},
		Does: "a node of its own; a TCP connection tracked in table `theld` (expire 1s) held open 3s, then `show activity` twice 2s apart while it is still open", Expects: fmt.Sprintf("fewer than %d poll loops per second", busyLoops),
		Want: idle},
	{ID: "show-fd-type-then-number", Fix: "355566f876bc", Since: "2.8", Kind: Steps, Drive: showFD("l ", ""),
		Does: "`show fd l` to find a listener's fd, then `show fd l <fd>`", Expects: "that fd's line",
		Want: shownFD},
	{ID: "show-fd-any-group-form", Fix: "2b7f1cb2fe12", Since: "3.4", Kind: Steps, Drive: showFD("", "/"),
		Does: "`show fd l` to find a listener's fd, then `show fd /<fd>`", Expects: "that fd's line",
		Want: shownFD},
	{ID: "string-key-with-nul-one-entry", Fix: "1014a43e0285", Kind: Steps, Drive: nulKey,
		Does: "for keys AB, CD, EF, GH: `GET /?q=<key>%00zz` then `GET /?q=<key>` on 8083, which tracks `url_param(q),url_dec` in string table `tnul`", Expects: "each key listed once in `show table tnul`",
		Want: startsWith("keys listed more than once: 0 ", "a key with a NUL landed apart from the same key without it")},
	{ID: "frontend-full-then-rate-limited-resumes", Fix: "65ae1347c7d0", Kind: Steps, Drive: fullThenLimited,
		Does: "frontend on 8084 with `maxconn 1` and `rate-limit sessions 1`: connection A held, B sends a request once the listener stopped accepting, A closed at once", Expects: "B answered within 6s",
		Want: startsWith("answered", "the frontend never accepted again")},
}

// startsWith: the answer begins with p; why is said with the answer.
func startsWith(p, why string) func(string) (bool, string) {
	return func(a string) (bool, string) { return strings.HasPrefix(a, p), why + " (" + a + ")" }
}

// counts reads "N -> M" from a Steps answer.
func counts(a string, re *regexp.Regexp) (before, after int, ok bool) {
	m := re.FindStringSubmatch(a)
	if m == nil {
		return 0, 0, false
	}
	before, _ = strconv.Atoi(m[1])
	after, _ = strconv.Atoi(m[2])
	return before, after, true
}

var (
	poolCountsRe  = regexp.MustCompile(`trash used (\d+) -> (\d+)`)
	purgeCountsRe = regexp.MustCompile(`tpurge used (\d+) -> (\d+)`)
	loopRateRe    = regexp.MustCompile(`(\d+) loops/s`)
	fdLineRe      = regexp.MustCompile(`(?m)^\s*(\d+)\s*:`) // a show fd line's fd
)

const quits = 200

// quitLeak counts the trash pool's used buffers around quits connections
// that send only quit.
func quitLeak(ctx context.Context, n *node.Node) (string, error) {
	trash := func() (int, error) {
		out, err := n.Stats(ctx, "show pools")
		if err != nil {
			return 0, err
		}
		ps, err := cliout.ParsePools(out)
		if err != nil {
			return 0, err
		}
		p, ok := cliout.FindPool(ps, "trash")
		if !ok {
			return 0, fmt.Errorf("no trash pool in show pools")
		}
		return p.Used, nil
	}
	before, err := trash()
	if err != nil {
		return "", err
	}
	for i := range quits {
		if _, err := raw(ctx, n, node.StatsPort, "quit\n", true, false); err != nil {
			return "", fmt.Errorf("quit %d: %w", i+1, err)
		}
	}
	after, err := trash()
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("trash used %d -> %d after %d quit", before, after, quits), nil
}

// purgeKeys: 3.2 expires at most 100 entries of a shard per run of its
// expire task, and a default build (MAX_THREADS 1024) has 64 shards: about
// 250 a shard.
const purgeKeys = 16200 // 324 lines of perLine

// purge fills tpurge, blocks the worker past the entries' expiry and
// polls the table until empty.
func purge(ctx context.Context, n *node.Node) (string, error) {
	const perLine = 50 // lines of under 2 KB: 2.9.0 dropped some of 10 KB
	for k := 0; k < purgeKeys; k += perLine {
		var b strings.Builder
		for i := k; i < k+perLine; i++ {
			fmt.Fprintf(&b, "set table tpurge key p%d data.gpc0 1;", i)
		}
		b.WriteString("\n")
		if _, err := raw(ctx, n, node.StatsPort, b.String(), true, false); err != nil {
			return "", fmt.Errorf("filling tpurge: %w", err)
		}
	}
	used := func() (int, error) {
		// The list of tables, never a dump of tpurge: a dump kills the
		// expired entries it walks, orphans included.
		out, err := n.Stats(ctx, "show table")
		if err != nil {
			return 0, err
		}
		ts, err := cliout.ParseTables(out)
		for _, t := range ts {
			if t.Name == "tpurge" {
				return t.Used, nil
			}
		}
		return 0, cmp.Or(err, fmt.Errorf("no table tpurge in show table"))
	}
	filled, err := used()
	if err != nil {
		return "", err
	}
	if filled < purgeKeys*3/4 {
		// Filling took near the expire: too few expire together.
		return "", fmt.Errorf("tpurge holds %d entries after %d were set", filled, purgeKeys)
	}
	if _, err := raw(ctx, n, node.StatsPort, "expert-mode on; debug dev delay 8500\n", true, false); err != nil {
		return "", fmt.Errorf("debug dev delay: %w", err)
	}
	left := filled
	err = node.Poll(ctx, 10*time.Second, 200*time.Millisecond, func() (bool, error) {
		var err error
		left, err = used()
		return err == nil && left == 0, err
	})
	if err != nil && !errors.Is(err, node.ErrDeadline) {
		return "", fmt.Errorf("reading tpurge after the delay: %w", err)
	}
	return fmt.Sprintf("tpurge used %d -> %d within 10s after the delay", filled, left), nil
}

// httpDefaults: the defaults section of the own nodes' HTTP configs.
const httpDefaults = `defaults
    mode http
    timeout connect 2s
    timeout client 10s
    timeout server 10s
`

// The node of the shards cases: listener names and ids are distinct only
// when every shard got one of its own.
const shardsNode = `global
    nbthread 4
    stats socket ipv4@0.0.0.0:9998 level admin

` + httpDefaults + `
frontend fe
    option socket-stats
    bind 127.0.0.1:18081 shards 4 id 100
    bind 127.0.0.1:18082 shards 4 id 200
    http-request return status 200

frontend fe2
    option socket-stats
    bind 127.0.0.1:18083 shards 4 id 10
    bind 127.0.0.1:18084 shards 4 id 12
    bind 127.0.0.1:18085
    http-request return status 200
`

// distinctListeners: the proxy has want listener rows, no two sharing a
// name or an id.
func distinctListeners(proxy string, want int) func(string) (bool, string) {
	return func(a string) (bool, string) {
		rows, err := cliout.ParseStat(a)
		if err != nil {
			return false, err.Error()
		}
		names, ids := map[string]int{}, map[string]int{}
		var dup []string
		k := 0
		for _, r := range rows {
			if r.Proxy != proxy || r.Type() != 3 {
				continue
			}
			k++
			names[r.Server]++
			ids[r.Fields["sid"]]++
			if names[r.Server] == 2 {
				dup = append(dup, "name "+r.Server)
			}
			if ids[r.Fields["sid"]] == 2 {
				dup = append(dup, "id "+r.Fields["sid"])
			}
		}
		return k == want && dup == nil, fmt.Sprintf("%s: %d listener rows (want %d), shared: %s", proxy, k, want, strings.Join(dup, ", "))
	}
}

// idleClose: an interactive session given a 1s timeout, then idle.
func idleClose(ctx context.Context, n *node.Node) (string, error) {
	conn, err := dial(ctx, n, node.StatsPort)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("prompt\nset timeout cli 1\n")); err != nil {
		return "", fmt.Errorf("sending: %w", err)
	}
	start := time.Now()
	conn.SetReadDeadline(start.Add(6 * time.Second))
	got, err := io.ReadAll(conn)
	var ne net.Error
	switch {
	case errors.As(err, &ne) && ne.Timeout() && len(got) == 0:
		return "", fmt.Errorf("no answer to prompt within 6s")
	case errors.As(err, &ne) && ne.Timeout():
		return fmt.Sprintf("still open after 6s (answered %q)", got), nil
	}
	return fmt.Sprintf("closed by haproxy after %.1fs", time.Since(start).Seconds()), nil
}

// The node of the counter case: the configuration of upstream's report.
const counterNode = `global
    stats socket ipv4@0.0.0.0:9998 level admin
    tune.stick-counters 11

` + httpDefaults + `
frontend www
    bind 0.0.0.0:8082
    http-request set-var(txn.track_var) str("a")
    http-request track-sc10 var(txn.track_var) table rate_table
    http-request set-var(txn.track_var_rate) sc_gpc_rate(0,10,rate_table)
    http-request return status 200

backend rate_table
    stick-table type string size 1k expire 5m store gpc_rate(1,1m)
`

// get8082 sends one request to the node's 8082: its status line.
func get8082(path string) func(context.Context, *node.Node) (string, error) {
	return func(ctx context.Context, n *node.Node) (string, error) {
		code, err := get(ctx, n, "8082/tcp", path)
		if err != nil {
			// Unknown, unless run then finds the worker dead: a slow
			// answer is never the bug's.
			return "", fmt.Errorf("the request: %w", err)
		}
		return strconv.Itoa(code), nil
	}
}

// The node of the idle cases, one each: an expire task that spins shows
// as the poll loop running without pause.
const idleNode = `global
    nbthread 1
    stats socket ipv4@0.0.0.0:9998 level admin

defaults
    timeout connect 2s
    timeout client 1m
    timeout server 1m

frontend held
    mode tcp
    bind 0.0.0.0:8083
    tcp-request connection track-sc0 src table theld
    tcp-request inspect-delay 30s
    tcp-request content accept if { req.len gt 1000 }
    default_backend nowhere

backend nowhere
    mode tcp

backend tshort
    stick-table type string len 32 size 1k expire 1s store gpc0

backend theld
    stick-table type ip size 1k expire 1s store gpc0
`

// busyLoops: an idle worker loops a few times a second (timers, harp's
// own CLI connections); one whose task wakes at once loops thousands.
const busyLoops = 500

func idle(a string) (bool, string) {
	m := loopRateRe.FindStringSubmatch(a)
	if m == nil {
		return false, "no loop rate in " + a
	}
	r, _ := strconv.Atoi(m[1])
	return r < busyLoops, fmt.Sprintf("the idle worker loops %d times a second", r)
}

// loopRate samples show activity's loop count 2s apart.
func loopRate(ctx context.Context, n *node.Node) (string, error) {
	sample := func() (int64, time.Time, error) {
		out, err := n.Stats(ctx, "show activity")
		if err != nil {
			return 0, time.Time{}, err
		}
		l, err := cliout.Loops(out)
		return l, time.Now(), err
	}
	l0, t0, err := sample()
	if err != nil {
		return "", err
	}
	time.Sleep(2 * time.Second) // the window measured, not a wait for an outcome
	l1, t1, err := sample()
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%d loops/s", int64(float64(l1-l0)/t1.Sub(t0).Seconds())), nil
}

// wrapped: HAProxy's internal millisecond clock wraps 20 s after boot, and
// a date of "never" compares as past only on the far side of the wrap.
const wrapped = 22

// idleAfterExpiry waits for the worker's clock to wrap, lets an entry
// expire, then measures the loop rate.
func idleAfterExpiry(ctx context.Context, n *node.Node) (string, error) {
	err := node.Poll(ctx, (wrapped+10)*time.Second, 500*time.Millisecond, func() (bool, error) {
		out, err := n.Stats(ctx, "show info")
		if err != nil {
			return false, err
		}
		info, err := cliout.ParseInfo(out)
		return err == nil && info.Int("Uptime_sec") >= wrapped, err
	})
	if err != nil {
		return "", fmt.Errorf("waiting for the worker to be up %ds: %w", wrapped, err)
	}
	if _, err := raw(ctx, n, node.StatsPort, "set table tshort key gone data.gpc0 1\n", true, false); err != nil {
		return "", err
	}
	if err := waitUsed(ctx, n, "tshort", 0, 10*time.Second); err != nil {
		return "", fmt.Errorf("waiting for tshort to be empty: %w", err)
	}
	return loopRate(ctx, n)
}

// waitUsed polls `show table <table>` until it holds want entries.
func waitUsed(ctx context.Context, n *node.Node, table string, want int, timeout time.Duration) error {
	return node.Poll(ctx, timeout, 200*time.Millisecond, func() (bool, error) {
		out, err := n.Stats(ctx, "show table "+table)
		if err != nil {
			return false, err
		}
		t, err := cliout.ParseTable(out)
		return err == nil && t.Used == want, err
	})
}

// idleHeld holds a connection tracked in tshort past the entry's expire.
func idleHeld(ctx context.Context, n *node.Node) (string, error) {
	conn, err := dial(ctx, n, "8083/tcp")
	if err != nil {
		return "", err
	}
	defer conn.Close()
	if err := waitUsed(ctx, n, "theld", 1, 5*time.Second); err != nil {
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
			return "", fmt.Errorf("show fd l lists no listener: %q", oneLine(out))
		}
		one, err := n.Stats(ctx, "show fd "+filter+prefix+m[1])
		if err != nil {
			return "", err
		}
		return "fd " + m[1] + "\n" + one, nil
	}
}

func shownFD(a string) (bool, string) {
	fd, out, _ := strings.Cut(a, "\n")
	fd = strings.TrimPrefix(fd, "fd ")
	ok := regexp.MustCompile(`(?m)^\s*` + regexp.QuoteMeta(fd) + `\s*:`).MatchString(out)
	return ok, fmt.Sprintf("fd %s was asked for, the answer was %q", fd, oneLine(out))
}

// nulKeys: with 3.0's 16 buckets a key and the same with a NUL and more
// bytes after it land apart 15 times in 16; four keys make a miss rare.
var nulKeys = []string{"AB", "CD", "EF", "GH"}

// nulKey: each key with an embedded NUL, then without it.
func nulKey(ctx context.Context, n *node.Node) (string, error) {
	for _, k := range nulKeys {
		for _, p := range []string{"/?q=" + k + "%00zz", "/?q=" + k} {
			if _, err := get(ctx, n, "8083/tcp", p); err != nil {
				return "", fmt.Errorf("GET %s: %w", p, err)
			}
		}
	}
	out, err := n.Stats(ctx, "show table tnul")
	if err != nil {
		return "", err
	}
	t, err := cliout.ParseTable(out)
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
	a, err := dial(ctx, n, "8084/tcp")
	if err != nil {
		return "", fmt.Errorf("A: %w", err)
	}
	defer a.Close()
	conns := func() (int64, error) {
		out, err := n.Stats(ctx, "show stat")
		if err != nil {
			return 0, err
		}
		rows, err := cliout.ParseStat(out)
		if err != nil {
			return 0, err
		}
		fe, ok := cliout.FindStat(rows, "limited", "FRONTEND")
		if !ok {
			return 0, fmt.Errorf("no frontend limited in show stat")
		}
		return fe.Int("scur"), nil
	}
	if err := node.Poll(ctx, 5*time.Second, 50*time.Millisecond, func() (bool, error) {
		c, err := conns()
		return c == 1, err
	}); err != nil {
		return "", fmt.Errorf("A was never accepted: %w", err)
	}
	b, err := dial(ctx, n, "8084/tcp")
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
	b.SetReadDeadline(start.Add(6 * time.Second))
	got, _ := io.ReadAll(b)
	if strings.HasPrefix(string(got), "HTTP/1.") {
		return fmt.Sprintf("answered after %.1fs", time.Since(start).Seconds()), nil
	}
	c, err := conns()
	if err != nil {
		return "", fmt.Errorf("B unanswered, and show stat after it: %w", err)
	}
	return fmt.Sprintf("B unanswered after 6s (%q), frontend sessions %d", got, c), nil
}

// pipes commands in one line: the client closes before their answers.
const pipes = 50

var pipelined = func() string {
	cmds := make([]string, pipes)
	for i := range cmds {
		cmds[i] = fmt.Sprintf("set table tpipe key 10.1.0.%d data.gpc0 1", i+1)
	}
	return strings.Join(cmds, "; ") + "\n"
}()

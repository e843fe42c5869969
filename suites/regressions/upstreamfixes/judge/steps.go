package judge

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/harp-project/harp/harness/cliout"
)

// The cases that take several steps (counts before and after, a
// connection's fate over time), or a node of their own.

var stepCases = []Case{
	{ID: "exec-thread-groups-master-cli", Fix: "a053512a7f48", Since: "2.8",
		Does: "a master-worker start with a master CLI (`-S`) of a config with `thread-groups 2` (a bind across groups: 2.8) whose one bind fails, so that it ends by itself", Expects: "it ends on the failed bind (a status under 128), not on a signal",
		Want: func(a string) (bool, string) {
			code, err := strconv.Atoi(strings.TrimPrefix(strings.SplitN(a, "\n", 2)[0], "exit "))
			return err == nil && code >= 0 && code < 128, "the master-worker start ended on a signal (" + OneLine(a) + ")"
		}},
	{ID: "cli-pipelined-then-close-all-run", Fix: "2d7e3ddd4a28",
		Does: fmt.Sprintf("%d `set table tpipe key 10.1.0.<n> data.gpc0 1` joined by `;` in one write on the node's own address, then the client's end and close without reading", Pipes), Expects: fmt.Sprintf("all %d entries in `show table tpipe`", Pipes),
		Want: func(a string) (bool, string) {
			_, after, _ := strings.Cut(a, "\n--- then\n")
			k := strings.Count(after, " key=10.1.0.")
			return k == Pipes, fmt.Sprintf("a close right after pipelined commands stopped them: %d of %d ran", k, Pipes)
		}},
	{ID: "cli-error-ends-with-empty-line", Fix: "6219a58d2850",
		Does: "`show events harp-nosuch` (no such sink)", Expects: "the error with its own line feed, then the empty line that ends every answer",
		Want: func(a string) (bool, string) {
			return strings.HasSuffix(a, "\n\n"), fmt.Sprintf("the error %q lacks its line feed, so no empty line ends the answer (a prompt-mode client waits for ever)", a)
		}},
	{ID: "cli-quit-releases-its-buffer", Fix: "e63e98f1d835",
		Does: fmt.Sprintf("%d connections to the stats socket that send only `quit`, `show pools` before and after", Quits), Expects: "the trash pool's used count grows by less than half of that",
		Want: func(a string) (bool, string) {
			before, after, ok := counts(a, poolCountsRe)
			return ok && after-before < Quits/2, fmt.Sprintf("each `quit` kept a buffer (%s)", a)
		}},
	{ID: "expired-entries-all-purged", Fix: "8da6ed6b6aec",
		Does: fmt.Sprintf("%d entries in table `tpurge` (expire 8s) by `set table`, then `debug dev delay 8500` (expert mode) so that all expire at once", PurgeKeys), Expects: "`show table tpurge` empty within 10s",
		Want: func(a string) (bool, string) {
			_, after, ok := counts(a, purgeCountsRe)
			return ok && after == 0, fmt.Sprintf("expired entries outlived the expire task (%s)", a)
		}},
	{ID: "listener-shards-distinct-ids", Fix: "0db8b6034d87",
		Does: "`show stat` on a node of its own (nbthread 4) whose frontend `fe` has binds `id 100` and `id 200` of 4 shards each, with `option socket-stats`", Expects: "8 listener rows of fe, no two with the same name or id",
		Want: distinctListeners("fe", 8)},
	{ID: "listener-shards-close-ids-distinct", Fix: "dd49f1ee6230",
		Does: "`show stat` on the same kind of node, frontend `fe2`: binds `id 10` and `id 12` of 4 shards each, and one without an id", Expects: "9 listener rows of fe2, no two with the same id",
		Want: distinctListeners("fe2", 9)},
	{ID: "cli-idle-prompt-closed-on-timeout", Fix: "101cc4f3340a",
		Does: "`prompt` then `set timeout cli 1` on the stats socket, then nothing", Expects: "HAProxy closes the connection within 6s",
		Want: startsWith("closed by haproxy", "an idle interactive session outlived its timeout")},
	{ID: "sc-generic-fetch-counter-above-9", Fix: "0e6f968ee379", Since: "2.8",
		Does: "a request on a node of its own (`tune.stick-counters 11`) tracked by `track-sc10`, read by `sc_gpc_rate(0,10,rate_table)`", Expects: "answered, the worker alive",
		Want: startsWith("200", "the request was not answered")},
	{ID: "idle-worker-after-entries-expired", Fix: "dfe866fa9866",
		Does: fmt.Sprintf("a node of its own, up %ds (past the wrap of HAProxy's internal clock), with one entry in table `tshort` (expire 1s); once `show table tshort` is empty: `show activity` twice 2s apart", Wrapped), Expects: fmt.Sprintf("fewer than %d poll loops per second", busyLoops),
		Want: idle},
	{ID: "idle-worker-with-entry-in-use", Fix: "993c09438ba9",
		Does: "a node of its own; a TCP connection tracked in table `theld` (expire 1s) held open 3s, then `show activity` twice 2s apart while it is still open", Expects: fmt.Sprintf("fewer than %d poll loops per second", busyLoops),
		Want: idle},
	{ID: "show-fd-type-then-number", Fix: "355566f876bc", Since: "2.8",
		Does: "`show fd l` to find a listener's fd, then `show fd l <fd>`", Expects: "that fd's line",
		Want: shownFD},
	{ID: "show-fd-any-group-form", Fix: "2b7f1cb2fe12", Since: "3.4",
		Does: "`show fd l` to find a listener's fd, then `show fd /<fd>`", Expects: "that fd's line",
		Want: shownFD},
	{ID: "string-key-with-nul-one-entry", Fix: "1014a43e0285",
		Does: "for keys AB, CD, EF, GH: `GET /?q=<key>%00zz` then `GET /?q=<key>` on 8083, which tracks `url_param(q),url_dec` in string table `tnul`", Expects: "each key listed once in `show table tnul`",
		Want: startsWith("keys listed more than once: 0 ", "a key with a NUL landed apart from the same key without it")},
	{ID: "frontend-full-then-rate-limited-resumes", Fix: "65ae1347c7d0",
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

// What the suite's Steps answers say, as "N -> M" and a rate.
var (
	poolCountsRe  = regexp.MustCompile(`trash used (\d+) -> (\d+)`)
	purgeCountsRe = regexp.MustCompile(`tpurge used (\d+) -> (\d+)`)
	loopRateRe    = regexp.MustCompile(`(\d+) loops/s`)
)

// Quits: the connections that send only quit.
const Quits = 200

// PurgeKeys: 3.2 expires at most 100 entries of a shard per run of its
// expire task, and a default build (MAX_THREADS 1024) has 64 shards: about
// 250 a shard.
const PurgeKeys = 16200 // 324 lines of the suite's perLine

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

// Wrapped: HAProxy's internal millisecond clock wraps 20 s after boot, and
// a date of "never" compares as past only on the far side of the wrap.
const Wrapped = 22

func shownFD(a string) (bool, string) {
	fd, out, _ := strings.Cut(a, "\n")
	fd = strings.TrimPrefix(fd, "fd ")
	ok := regexp.MustCompile(`(?m)^\s*` + regexp.QuoteMeta(fd) + `\s*:`).MatchString(out)
	return ok, fmt.Sprintf("fd %s was asked for, the answer was %q", fd, OneLine(out))
}

// Pipes: commands in one line: the client closes before their answers.
const Pipes = 50

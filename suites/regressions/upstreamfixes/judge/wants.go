package judge

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/harp-project/harp/harness/cliout"
	"github.com/harp-project/harp/harness/fixcase"
)

// goWants judge the cases whose file says `want go`: answers that need
// parsing, or a why that quotes what was counted.
var goWants = map[string]func(string) (bool, string){
	"cli-map-payload-crlf": func(a string) (bool, string) {
		has := func(k string) bool {
			for _, l := range strings.Split(then(a), "\n") {
				if f := strings.Fields(l); len(f) >= 2 && f[1] == k {
					return true
				}
			}
			return false
		}
		return has("k1") && has("k2"), "CRLF-ended payload lines were not read as separate entries"
	},
	"cli-immediate-abort-released": func(a string) (bool, string) {
		// Only sessions born with the case count: one an earlier case
		// left (2.7.0 kept a 30s-old one) is not this bug's.
		young := 0
		for _, l := range strings.Split(then(a), "\n") {
			if m := sessAge.FindStringSubmatch(l); m != nil && strings.Contains(l, " fe=GLOBAL ") {
				if age, err := strconv.Atoi(m[1]); err == nil && age < 20 {
					young++
				}
			}
		}
		return young <= 1, "aborted CLI connections left their sessions behind"
	},
	"mcli-master-uptime-sane": func(a string) (bool, string) {
		p, err := cliout.ParseProcs(a)
		return err == nil && p.Master.Uptime >= 0 && p.Master.Uptime < time.Hour, fmt.Sprintf("the master's uptime is not that of a node up for less than an hour (%v)", orErr(p.Master.Uptime, err))
	},
	"http-other-table-counter-by-own-key": func(a string) (bool, string) {
		return strings.TrimSpace(strings.TrimPrefix(a, "x-g:")) != "42", "a counter of another table was read with the tracked key's bytes"
	},
	"exec-thread-groups-master-cli": func(a string) (bool, string) {
		code, err := strconv.Atoi(strings.TrimPrefix(strings.SplitN(a, "\n", 2)[0], "exit "))
		return err == nil && code >= 0 && code < 128, "the master-worker start ended on a signal (" + OneLine(a) + ")"
	},
	"cli-pipelined-then-close-all-run": func(a string) (bool, string) {
		k := strings.Count(then(a), " key=10.1.0.")
		return k == Pipes, fmt.Sprintf("a close right after pipelined commands stopped them: %d of %d ran", k, Pipes)
	},
	"cli-error-ends-with-empty-line": func(a string) (bool, string) {
		return strings.HasSuffix(a, "\n\n"), fmt.Sprintf("the error %q lacks its line feed, so no empty line ends the answer (a prompt-mode client waits for ever)", a)
	},
	"cli-quit-releases-its-buffer": func(a string) (bool, string) {
		before, after, ok := counts(a, poolCountsRe)
		return ok && after-before < Quits/2, fmt.Sprintf("each `quit` kept a buffer (%s)", a)
	},
	"expired-entries-all-purged": func(a string) (bool, string) {
		_, after, ok := counts(a, purgeCountsRe)
		return ok && after == 0, fmt.Sprintf("expired entries outlived the expire task (%s)", a)
	},
	"listener-shards-distinct-ids":       distinctListeners("fe", 8),
	"listener-shards-close-ids-distinct": distinctListeners("fe2", 9),
	"idle-worker-after-entries-expired":  idle,
	"idle-worker-with-entry-in-use":      idle,
	"show-fd-type-then-number":           shownFD,
	"show-fd-any-group-form":             shownFD,
}

// then is the answer to a case's Then.
func then(a string) string {
	_, after, _ := strings.Cut(a, fixcase.ThenMark)
	return after
}

// orErr is v, or the error that stopped reading it.
func orErr(v any, err error) any {
	if err != nil {
		return err
	}
	return v
}

// sessAge is a show sess line's age in whole seconds under a minute
// ("age=12s"; older ones show minutes, hours or days).
var sessAge = regexp.MustCompile(`\bage=(\d+)s\b`)

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

// Pipes: commands in one line (cli-pipelined-then-close-all-run's send):
// the client closes before their answers.
const Pipes = 50

// Wrapped: HAProxy's internal millisecond clock wraps 20 s after boot, and
// a date of "never" compares as past only on the far side of the wrap.
const Wrapped = 22

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

func shownFD(a string) (bool, string) {
	fd, out, _ := strings.Cut(a, "\n")
	fd = strings.TrimPrefix(fd, "fd ")
	ok := regexp.MustCompile(`(?m)^\s*` + regexp.QuoteMeta(fd) + `\s*:`).MatchString(out)
	return ok, fmt.Sprintf("fd %s was asked for, the answer was %q", fd, OneLine(out))
}

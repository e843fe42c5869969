package judge

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/harp-project/harp/harness/cliout"
)

// The cases: each upstream fix as a value, and what its answer must be.

func contains(sub, why string) func(string) (bool, string) {
	return func(a string) (bool, string) { return strings.Contains(a, sub), why }
}

func lacks(sub, why string) func(string) (bool, string) {
	return func(a string) (bool, string) { return !strings.Contains(a, sub), why }
}

func accepted(a string) (bool, string) {
	return strings.HasPrefix(a, "exit 0"), "haproxy -c refused a valid config"
}

func refused(a string) (bool, string) {
	return !strings.HasPrefix(a, "exit 0"), "haproxy -c accepted an invalid config"
}

// exitedZero: an Exec case's haproxy ended with status 0.
func exitedZero(why string) func(string) (bool, string) {
	return func(a string) (bool, string) { return strings.HasPrefix(a, "exit 0\n"), why }
}

// once: an Exec case's output holds line exactly once (twice is the bug;
// never is a build that does not print it, which the case's Since rules out).
func once(line, why string) func(string) (bool, string) {
	return func(a string) (bool, string) {
		n := strings.Count(a, line)
		return n == 1, fmt.Sprintf("%s (%q printed %d times)", why, line, n)
	}
}

// sessAge is a show sess line's age in whole seconds under a minute
// ("age=12s"; older ones show minutes, hours or days).
var sessAge = regexp.MustCompile(`\bage=(\d+)s\b`)

// Cases in the order they run: those of one exchange, those of several
// steps or a node of their own, then the half-closed peers connection
// (left open by 3.3.0: a stream that would hold back later peers
// sessions), and last the one that crashes a bad build's shared node.
var Cases = slices.Concat(oneExchange[:len(oneExchange)-2], stepCases, oneExchange[len(oneExchange)-2:])

var oneExchange = []Case{
	{ID: "cli-empty-line-ignored", Fix: "21d7125c9233",
		Does: "an empty line on the stats socket", Expects: "no `Unknown command` answer",
		Want: lacks("Unknown command", "an empty line was answered as an unknown command")},
	{ID: "cli-too-many-args-refused", Fix: "d3f92894471d",
		Does: "`show info` followed by 70 words", Expects: "`Too many arguments`",
		Want: contains("Too many arguments", "a command with more than 64 arguments ran")},
	{ID: "cli-too-big-command-reported", Fix: "498520fdf505",
		Does: "20000 bytes without a line end, the connection kept open for writing", Expects: "an error saying the command is too big",
		Want: contains("too big", "a command larger than the buffer was dropped without a word")},
	{ID: "cli-set-table-invalid-ip-refused", Fix: "c6826b957053",
		Does: "`set table tip key foo data.gpc0 1` on an ip table", Expects: "refused, and `show table tip` lists no entry",
		Want: func(a string) (bool, string) {
			_, after, _ := strings.Cut(a, "\n--- then\n")
			return !strings.Contains(after, "key="), "an invalid IPv4 key was stored"
		}},
	{ID: "cli-anon-global-key", Fix: "dd3a33f863c4", Since: "2.7",
		Does: "`set anon global-key 12345`", Expects: "accepted",
		Want: lacks("only supports", "`set anon global-key` was refused")},
	{ID: "cli-env-without-sockpairs", Fix: "113745e6f0c0",
		Does: "`show env HAPROXY_CLI; show env HAPROXY_MASTER_CLI`", Expects: "no `sockpair@` address",
		Want: lacks("sockpair@", "the CLI addresses in the environment list internal socket pairs")},
	{ID: "cli-map-payload-crlf", Fix: "d60c89399169",
		Does: "`add map ... <<` with two CRLF-ended lines", Expects: "k1 and k2 both in `show map`",
		Want: func(a string) (bool, string) {
			_, after, _ := strings.Cut(a, "\n--- then\n")
			has := func(k string) bool {
				for _, l := range strings.Split(after, "\n") {
					if f := strings.Fields(l); len(f) >= 2 && f[1] == k {
						return true
					}
				}
				return false
			}
			return has("k1") && has("k2"), "CRLF-ended payload lines were not read as separate entries"
		}},
	{ID: "cli-immediate-abort-released", Fix: "14a413033c15",
		Does: "5 connections to the stats socket, on the node's own address, closed at once without a byte (fewer than its maxconn of 10: leaked sessions must not lock harp out), then `show sess`", Expects: "no session of theirs left (at most the one asking)",
		Want: func(a string) (bool, string) {
			_, after, _ := strings.Cut(a, "\n--- then\n")
			// Only sessions born with the case count: one an earlier case
			// left (2.7.0 kept a 30s-old one) is not this bug's.
			young := 0
			for _, l := range strings.Split(after, "\n") {
				if m := sessAge.FindStringSubmatch(l); m != nil && strings.Contains(l, " fe=GLOBAL ") {
					if age, err := strconv.Atoi(m[1]); err == nil && age < 20 {
						young++
					}
				}
			}
			return young <= 1, "aborted CLI connections left their sessions behind"
		}},
	{ID: "cli-debug-counters-one-line-each", Fix: "23705564ae1b", Since: "3.1",
		Does: "`debug counters all`", Expects: "no line that is only `]`",
		Want: func(a string) (bool, string) {
			for _, l := range strings.Split(a, "\n") {
				if strings.TrimSpace(l) == "]" {
					return false, "a counter's text was split over two lines"
				}
			}
			return true, ""
		}},
	{ID: "cli-pipelined-after-pause", Fix: "3d93ecc132c5",
		Does: "`show info;`, a pause, then `show env`", Expects: "both answers",
		Want: func(a string) (bool, string) {
			return strings.Contains(a, "Pid:") && strings.Contains(a, "PATH="), "a command sent after a pause in a pipeline got no answer"
		}},
	{ID: "cli-help-show-table-argument-optional", Fix: "623aa725a2b9",
		Does: "`help`", Expects: "`show table`'s table argument shown as optional",
		Want: lacks("show table <table> [<filter>]*", "help says show table needs a table")},
	{ID: "mcli-relative-pid-checked", Fix: "bac3a82a507b",
		Does: "`@2 show info` on the master CLI with one worker", Expects: "an error, no worker's answer",
		Want: lacks("Pid:", "a relative pid naming no process was answered by the worker")},
	{ID: "mcli-pipelined-after-expert-mode", Fix: "b75edf2f1148",
		Does: "`expert-mode on; @1 show info` on the master CLI", Expects: "the worker's `show info`",
		Want: contains("Pid:", "a command pipelined after a mode change on the master CLI got no answer")},
	{ID: "mcli-severity-output-applies", Fix: "1c1bb8ef2abe",
		Does: "`set severity-output number; @1 show table harp-nosuch` on the master CLI", Expects: "the error prefixed with its severity (`[3]:`)",
		Want: func(a string) (bool, string) {
			return regexp.MustCompile(`\[\d\]: `).MatchString(a), "set severity-output on the master CLI did not apply to the worker's answer"
		}},
	{ID: "mcli-user-level-kept-through-pid-prefix", Fix: "946921c19980", Since: "3.2",
		Does: "`user; @@1 set table tip key 10.9.9.9 data.gpc0 7` on the master CLI", Expects: "refused: `show table tip` has no 10.9.9.9",
		Want: func(a string) (bool, string) {
			_, after, _ := strings.Cut(a, "\n--- then\n")
			return !strings.Contains(after, "key=10.9.9.9"), "a command through @@ ran above the level the session lowered to"
		}},
	{ID: "cfg-check-with-daemon-reports-errors", Fix: "5f94e98d8958",
		Does: "`haproxy -c` of a config with `daemon` and an unknown keyword", Expects: "refused",
		Want: refused},
	{ID: "cfg-stats-bind-process-message", Fix: "023c311d70d1",
		Does: "`stats bind-process 1`", Expects: "no error calling the whole `stats` keyword unsupported",
		Want: lacks("'stats' is not supported anymore", "the error names `stats` for `stats bind-process`")},
	{ID: "cfg-len-needs-digits", Fix: "3f210970bf94",
		Does: "`stick-table type string len 32x`", Expects: "refused",
		Want: refused},
	{ID: "cfg-tcp-connection-sc-set-gpt", Fix: "6c79309fda89",
		Does: "`tcp-request connection sc-set-gpt0(0) int(7)`", Expects: "accepted",
		Want: accepted},
	{ID: "cfg-tcp-connection-sc-add-gpc", Fix: "7eb05891d85b", Since: "2.8",
		Does: "`tcp-request connection sc-add-gpc(0,0) int(3)`", Expects: "accepted",
		Want: accepted},
	{ID: "cfg-stick-counters-index", Fix: "21d5f43aa6e9", Since: "2.8",
		Does: "`tune.stick-counters 5` and `sc-add-gpc(0,4)`", Expects: "accepted",
		Want: accepted},
	{ID: "cfg-max-reloads-negative-refused", Fix: "af1d17012236",
		Does: "`mworker-max-reloads -1`", Expects: "refused",
		Want: refused},
	{ID: "cfg-sc-inc-gpc-error-names-action", Fix: "20391519c3db",
		Does: "`http-request sc-inc-gpc2(0)`", Expects: "refused with a message naming sc-inc-gpc",
		Want: func(a string) (bool, string) {
			return !strings.HasPrefix(a, "exit 0") && !strings.Contains(a, "Expects sc-set-gpc("), "the error names sc-set-gpc for sc-inc-gpc"
		}},
	{ID: "cli-64-args-then-next-command", Fix: "976e0bd32f6d",
		Does: "`show info` with 62 more words (64 arguments, the most allowed), then `;show env PATH`", Expects: "both answered, no `Too many arguments`",
		Want: func(a string) (bool, string) {
			return !strings.Contains(a, "Too many arguments") && strings.Contains(a, "PATH="), "a command of exactly 64 arguments was refused, or the next one not run"
		}},
	{ID: "cli-env-cfgfiles", Fix: "1f0cd91fe775",
		Does: "`show env HAPROXY_CFGFILES` on the worker", Expects: "the variable, naming the config file",
		Want: contains("HAPROXY_CFGFILES=/", "HAPROXY_CFGFILES is missing from the worker's environment")},
	{ID: "mcli-at-at-prefix-split-line", Fix: "7a79f54c98d8", Since: "3.2",
		Does: "`@@`, a pause, then `1 show info` on the master CLI", Expects: "the worker's `show info`",
		Want: contains("Pid:", "the `@@` prefix was parsed before its line was complete")},
	{ID: "mcli-master-uptime-sane", Fix: "2776e775eccc",
		Does: "`show proc` on the master CLI of a node up for less than an hour", Expects: "the master's uptime between 0 and an hour",
		Want: func(a string) (bool, string) {
			p, err := cliout.ParseProcs(a)
			return err == nil && p.Master.Uptime >= 0 && p.Master.Uptime < time.Hour, fmt.Sprintf("the master's uptime is not that of a node up for less than an hour (%v)", orErr(p.Master.Uptime, err))
		}},
	{ID: "exec-vv-exits-cleanly", Fix: "28ca7fc594ca",
		Does: "`haproxy -vv`", Expects: "exit status 0",
		Want: exitedZero("haproxy -vv did not exit 0 (a signal ends it with 128+N)")},
	{ID: "exec-check-master-worker", Fix: "d1c6d44976d4",
		Does: "`haproxy -W -c` of a valid config", Expects: "exit status 0, and no worker started for the check",
		Want: func(a string) (bool, string) {
			return strings.HasPrefix(a, "exit 0\n") && !strings.Contains(a, "new worker") && !strings.Contains(a, "no listener"), "a config check in master-worker mode started a worker, or did not pass a valid config"
		}},
	{ID: "exec-mworker-libs-dumped-once", Fix: "ea824aebc1ac", Since: "2.6",
		Does: "`haproxy -W -db -dL` of a config that cannot bind (it ends by itself)", Expects: "the library list printed once",
		Want: once("List of loaded object files:", "master and worker both dumped the loaded libraries")},
	{ID: "exec-mworker-keywords-dumped-once", Fix: "bbe7828d4975",
		Does: "`haproxy -W -db -dKcli` of a config that cannot bind", Expects: "the CLI keywords dumped once",
		Want: once("# List of registered CLI keywords", "master and worker both dumped the registered keywords")},
	{ID: "exec-mworker-pollers-dumped-once", Fix: "d3eb00e61d43",
		Does: "`haproxy -W -db -V` of a config that cannot bind", Expects: "the polling systems listed once",
		Want: once("Available polling systems", "master and worker both listed the polling systems")},
	{ID: "exec-program-without-command-refused", Fix: "e9928c306ce4", Until: "3.3",
		Does: "`haproxy -W -c` of a config whose `program p1` has no `command`", Expects: "refused, naming the missing command",
		Want: func(a string) (bool, string) {
			return !strings.HasPrefix(a, "exit 0\n") && strings.Contains(a, "lacks a command"), "a program section without a command was accepted"
		}},
	{ID: "exec-localpeer-set-before-config", Fix: "aa88d6ee372c",
		Does: "`haproxy -L harpnode -c` of a config whose frontend has an unknown keyword unless `${HAPROXY_LOCALPEER}` is harpnode there", Expects: "accepted",
		Want: exitedZero("HAPROXY_LOCALPEER was not set when the frontend was read")},
	{ID: "cli-partial-command-eof-no-error", Fix: "70251a2aeb59",
		Does: "`show info` without a line end, then the client's end", Expects: "no error that the command is too big",
		Want: lacks("too big", "a command cut short by the client's end was called too big")},
	{ID: "cli-user-level-refusal-releases-entry", Fix: "71199e394c5e",
		Does: "`set table texp key harp-user data.gpc0 1` on the level user socket (refused), table texp expiring entries after 1s", Expects: "no entry harp-user left in `show table texp` on the admin socket",
		Want: func(a string) (bool, string) {
			_, after, _ := strings.Cut(a, "\n--- then\n")
			return !strings.Contains(after, "key=harp-user "), "an entry a refused command looked up keeps its reference and never expires"
		}},
	{ID: "peer-unknown-table-traffic-keeps-session", Fix: "0909f62266df",
		Does: "harp's peer sends only a definition of a table the node lacks and one update of it every second, for 11s (two reconnect checks)", Expects: "the session still open",
		Want: func(a string) (bool, string) {
			return strings.HasPrefix(a, "open"), "messages about a table the node lacks did not keep the peer alive (" + a + ")"
		}},
	{ID: "peer-truncated-varint-then-close", Fix: "a7777bbf7935",
		Does: "harp's peer sends an update whose length varint is cut short, then half-closes", Expects: "HAProxy closes the session",
		Want: func(a string) (bool, string) {
			return a == "closed by haproxy", "a truncated message followed by the client's end was never closed"
		}},
	{ID: "http-other-table-counter-by-own-key", Fix: "5bbdd14f56a2",
		Does: "a request tracked by int(97) in integer table `tint` reads `sc0_get_gpc0(tstr)`, string table `tstr` holding key `a` (byte 97) with gpc0 42", Expects: "no value: the tracked entry is not tstr's",
		Want: func(a string) (bool, string) {
			return strings.TrimSpace(strings.TrimPrefix(a, "x-g:")) != "42", "a counter of another table was read with the tracked key's bytes"
		}},
	{ID: "peer-half-closed-connection-closed", Fix: "0b29b76a526d",
		Does: "a connection to the peers port that sends nothing and half-closes", Expects: "HAProxy closes it within 10s",
		Want: func(a string) (bool, string) {
			return a == "closed by haproxy", "a peers connection shut by its client is never closed"
		}},
	{ID: "connect-src-inc-gpc-untracked", Fix: "ea7ea5198a0e",
		Does: "one TCP connection to 8081 (src_inc_gpc with no tracked counter)", Expects: "the worker lives",
		Want: func(string) (bool, string) { return true, "" }},
}

// orErr is v, or the error that stopped reading it.
func orErr(v any, err error) any {
	if err != nil {
		return err
	}
	return v
}

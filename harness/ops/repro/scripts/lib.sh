# ---- shared helpers (harp's reproducer library) ----

# The script's directory, without dirname: the tools are checked further down.
case $0 in */*) HERE=${0%/*} HERE=${HERE:-/} ;; *) HERE=. ;; esac
HERE=$(cd "$HERE" && pwd) || exit 3
if [ $# -lt 1 ]; then
	echo "usage: $0 /path/to/haproxy" >&2
	exit 3
fi
HAPROXY=$1
case $HAPROXY in
*/*) ;;
*) HAPROXY=$(command -v "$HAPROXY" 2>/dev/null || echo "$HAPROXY") ;;
esac

START=20  # s: for a started haproxy's master CLI to list a worker
MASTER=   # the master's pid, once started
TRACKED=  # "pid:start-time" of each process started or listed by show proc: killed on exit
DIR=
SAID=     # pass or reproduced, once said: exit 0 and 1 mean nothing else

note() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*"; }
pass() { printf 'PASS: %s\n' "$*"; SAID=pass; exit 0; }
reproduced() { printf 'REPRODUCED: %s\n' "$*"; SAID=reproduced; exit 1; }
# cannot: the script itself could not do its part (a tool, the binary, a
# temporary directory): INCONCLUSIVE on stderr, never a verdict on HAProxy.
cannot() {
	printf 'INCONCLUSIVE: the reproducer could not run: %s\n' "$*" >&2
	exit 2
}
inconclusive() {
	printf 'INCONCLUSIVE: %s\n' "$*"
	if [ -n "$DIR" ] && [ -s "$DIR/haproxy.log" ]; then
		echo "haproxy's last output:"
		tail -n 15 "$DIR/haproxy.log" | sed 's/^/    /'
	fi
	exit 2
}

# Deadlines are whole seconds (date +%s); polls nap a tenth of a second
# (a whole one where sleep takes no fractions). No wait decides anything
# by its length alone: each polls for what it waits for, up to a deadline.
deadline() { echo $(($(date +%s) + $1)); }
before() { [ "$(date +%s)" -lt "$1" ]; }
nap() { sleep 0.1 2>/dev/null || sleep 1; }

# alive PID: the process runs (a zombie, dead but not yet reaped, does not).
alive() {
	if [ -r "/proc/$1/status" ]; then
		! grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null
	else
		kill -0 "$1" 2>/dev/null
	fi
}

# started PID: the process's start time (clock ticks after boot, field
# 22 of /proc/PID/stat); false when it is gone.
started() {
	line=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	rest=${line##*) }
	# shellcheck disable=SC2086
	set -- $rest
	echo "${20:-}"
}

# track PID...: remembers each pid with its start time (once).
track() {
	for p in "$@"; do
		case " $TRACKED " in *" $p:"*) continue ;; esac
		TRACKED="$TRACKED $p:$(started "$p")"
	done
}

# ours PID: the process tracked is still the one that had that pid (the
# same start time). Not its name: the binary given may be a wrapper
# script, whose name is not haproxy's; a pid since reused by another
# program is left alone.
ours() {
	[ -r "/proc/$1/stat" ] || return 0
	for e in $TRACKED; do
		case $e in
		"$1:"*)
			[ -n "${e#*:}" ] && [ "${e#*:}" = "$(started "$1")" ]
			return ;;
		esac
	done
	return 1
}

# children PID: its direct children, from /proc.
children() {
	for s in /proc/[0-9]*/stat; do
		[ -r "$s" ] || continue
		line=$(cat "$s" 2>/dev/null) || continue
		rest=${line##*) }
		# shellcheck disable=SC2086
		set -- $rest
		if [ "${2:-}" = "$PARENT" ]; then
			p=${s#/proc/}
			echo "${p%/stat}"
		fi
	done
}

cleanup() {
	rc=$?
	trap - EXIT INT TERM HUP
	# Exit 1 is REPRODUCED, 0 PASS, and nothing else: a failure of the
	# script's own (a tool failing under set -u, say) must not read as one.
	want=pass
	[ "$rc" = 1 ] && want=reproduced
	if { [ "$rc" = 0 ] || [ "$rc" = 1 ]; } && [ "$SAID" != "$want" ]; then
		printf 'INCONCLUSIVE: the reproducer failed (exit %s) before a verdict: the lines above say where\n' "$rc" >&2
		rc=2
	fi
	if [ -n "$MASTER" ]; then
		PARENT=$MASTER
		# shellcheck disable=SC2046
		track "$MASTER" $(children)
	fi
	pids=
	for e in $TRACKED; do pids="$pids ${e%%:*}"; done
	for p in $pids; do
		alive "$p" && ours "$p" && kill -TERM "$p" 2>/dev/null
	done
	t=$(deadline 5)
	while before "$t"; do
		left=
		for p in $pids; do
			alive "$p" && ours "$p" && left="$left $p"
		done
		[ -z "$left" ] && break
		nap
	done
	for p in $pids; do
		alive "$p" && ours "$p" && kill -KILL "$p" 2>/dev/null
	done
	[ -n "$DIR" ] && rm -rf "$DIR"
	exit "$rc"
}
trap cleanup EXIT
trap 'printf "INCONCLUSIVE: interrupted\n"; exit 2' INT TERM HUP

# Every program the script runs, checked before anything runs: a missing
# one would otherwise show as haproxy misbehaving (no awk: no worker seen).
# NEEDS, set by the script before these helpers, adds its own.
for tool in awk cat date grep head mktemp od rm sed sleep socat tail tr ${NEEDS:-}; do
	command -v "$tool" >/dev/null 2>&1 || cannot "$tool is needed and not in PATH ($PATH)$([ "$tool" = socat ] && echo ': Debian: apt install socat')"
done
[ -f "$HAPROXY" ] && [ -x "$HAPROXY" ] || cannot "$HAPROXY is not an executable file"
# haproxy -v: "HAProxy version 2.6.12-1 ..." ("HA-Proxy" before 2.0).
VERSION=$("$HAPROXY" -v 2>&1 | head -n 1)
case $VERSION in
"HAProxy version "* | "HA-Proxy version "*) ;;
*) cannot "$HAPROXY is not haproxy: its -v printed ${VERSION:-nothing}" ;;
esac
DIR=$(mktemp -d "${TMPDIR:-/tmp}/harp-repro.XXXXXX") || cannot "cannot make a temporary directory in ${TMPDIR:-/tmp} (TMPDIR)"
REPRO_DIR=$DIR
export REPRO_DIR
note "$VERSION"

# ask SOCKET COMMAND: one command on a CLI socket (the answer on stdout;
# the socket closes after it; 5 s without a byte ends the exchange).
ask() { printf '%s\n' "$2" | socat -t 5 -T 5 - "UNIX-CONNECT:$1" 2>/dev/null; }
master_cli() { ask "$DIR/master.sock" "$1"; }

# http_status PORT: the status of an HTTP/1.0 GET on a local port ("" for
# none). The client never half-closes: HAProxy may take a FIN for an abort.
http_status() {
	printf 'GET / HTTP/1.0\r\nHost: repro\r\n\r\n' |
		socat -t 5 -T 5 - "TCP:127.0.0.1:$1,shut-none" 2>/dev/null |
		sed -n '1s/^HTTP\/[0-9.]* \([0-9][0-9]*\).*/\1/p'
}

# show proc readings.
failed_count() { printf '%s\n' "$1" | sed -n 's/.*\[failed: *\([0-9][0-9]*\)\].*/\1/p' | head -n 1; }
current_worker() {
	printf '%s\n' "$1" | awk '$1 == "#" && $2 == "workers" { s = 1; next } /^#/ { s = 0; next } s && $1 ~ /^[0-9]+$/ { print $1; exit }'
}
listed() { printf '%s\n' "$1" | awk -v p="$2" '$1 == p { f = 1 } END { exit !f }'; }
# shellcheck disable=SC2046
remember() { track $(printf '%s\n' "$1" | awk '$1 ~ /^[0-9]+$/ { print $1 }'); }
master_pid() { printf '%s\n' "$1" | awk '$2 == "master" && $1 ~ /^[0-9]+$/ { print $1; exit }'; }

# read_procs: the master's show proc into PROCS, its pids remembered;
# false (PROCS empty) when it did not answer.
read_procs() {
	PROCS=$(master_cli "show proc")
	case $PROCS in
	*"#<PID>"*) remember "$PROCS" && return 0 ;;
	esac
	PROCS=
	return 1
}

# ended: how the master ended, into ENDED (call once it is not alive).
ended() {
	wait "$MASTER" 2>/dev/null
	s=$?
	case $s in
	134) ENDED="exit status 134 (signal 6, SIGABRT)" ;;
	135) ENDED="exit status 135 (signal 7, SIGBUS)" ;;
	137) ENDED="exit status 137 (signal 9, SIGKILL)" ;;
	139) ENDED="exit status 139 (signal 11, SIGSEGV)" ;;
	*) if [ "$s" -gt 128 ]; then ENDED="exit status $s (signal $((s - 128)))"; else ENDED="exit status $s"; fi ;;
	esac
}

# Free ports: the config's ports are ${PORT_n} variables (HAProxy expands
# them); a random base is tried, and another if haproxy cannot bind.
pick_ports() {
	r=$(od -An -N2 -tu2 /dev/urandom 2>/dev/null | tr -d ' ')
	base=$((20000 + ${r:-$$} % 40000))
	i=0
	for p in $PORTS; do
		eval "PORT_$p=$((base + i))"
		export "PORT_$p"
		i=$((i + 1))
	done
}

# start: the master-worker haproxy on haproxy.cfg, its master CLI on a
# socket; returns once show proc lists a worker (within START).
start() {
	for try in 1 2 3 4 5; do
		pick_ports
		: >"$DIR/haproxy.log"
		"$HAPROXY" -W -db -f "$DIR/haproxy.cfg" -S "$DIR/master.sock" >>"$DIR/haproxy.log" 2>&1 &
		MASTER=$!
		track "$MASTER"
		t=$(deadline "$START")
		while before "$t" && alive "$MASTER"; do
			if read_procs && [ -n "$(current_worker "$PROCS")" ]; then
				# The script signals and waits for the process it started: a
				# wrapper that runs haproxy as its child (not exec) would get
				# them instead (USR2 would kill it: a master "died").
				mp=$(master_pid "$PROCS")
				[ -z "$mp" ] || [ "$mp" = "$MASTER" ] ||
					cannot "$HAPROXY started haproxy as a child (master $mp, not $MASTER): give the haproxy binary, or a wrapper that execs it"
				note "haproxy started: master $MASTER, worker $(current_worker "$PROCS")"
				return 0
			fi
			nap
		done
		if alive "$MASTER"; then
			inconclusive "haproxy runs but its master CLI listed no worker within ${START} s"
		fi
		ended
		MASTER=
		if grep -qi 'cannot bind\|address already in use' "$DIR/haproxy.log"; then
			note "a port was taken (try $try): trying others"
			continue
		fi
		inconclusive "haproxy did not start ($ENDED)"
	done
	inconclusive "haproxy could not bind its ports in 5 tries"
}
# ---- end of the shared helpers ----

#!/bin/sh
# Standalone reproducer of harp finding {{.Finding.ID}}: {{.Finding.Signature}}
#   {{oneline .Finding.Example}}
# Made by harp from the evidence of {{oneline .From}}.
#
# usage: ./reproduce /path/to/haproxy
#   REPRODUCED and exit 1: the finding shows; PASS and exit 0: it does not;
#   INCONCLUSIVE and exit 2: a precondition was not met, or the script itself
#   could not run (a missing tool, not an haproxy, no temporary directory):
#   it says which; exit 3: usage. Exit 1 means the finding showed, nothing else.
# Needs POSIX sh, socat, awk and Linux's /proc; no harp, Go or Docker. It runs
# haproxy in master-worker mode (-W) in a temporary directory and kills
# every haproxy it started when it exits.
#
# It replays harp's failure/recovery cycles up to the one that showed the
# finding: before each, the current worker answers HTTP and gets a table
# entry; the config is replaced by one that cannot load (haproxy -c must
# refuse it), the master gets SIGUSR2, and show proc must count the
# failure; then the good config comes back and the master reloads.
set -u

CHECK={{.Check}}  # the check that failed: {{oneline .CheckText}}
BREAK={{.Break}}  # ... on this break only (empty: on any)
BOUND={{.Bound}}  # s: for show proc to count a failed reload, and for a good reload to start a worker
PORTS="{{.Ports}}"
NEEDS="cp" # the programs it runs that the helpers below do not
{{template "lib" .}}
worker_cli() { master_cli "@!$1 $2"; }
# http_within S: the first HTTP status within S seconds ("" for none).
http_within() {
	t=$(deadline "$1")
	code=
	while before "$t"; do
		code=$(http_status "$PORT_{{.WebPort}}")
		[ "$code" = 200 ] && break
		nap
	done
	echo "$code"
}
# usr2 FIELD: whether SIGUSR2 (12) is set in a mask of the master's status.
usr2() {
	m=$(sed -n "s/^$1:[[:space:]]*//p" "/proc/$MASTER/status" 2>/dev/null)
	[ -n "$m" ] || return 2
	low=${m#"${m%????}"}
	[ $((0x$low & 0x800)) -ne 0 ]
}

judged=0
# held: the check held in this cycle; failed: it failed (the finding).
held() { note "$CHECK held in cycle $n ($2)"; judged=$((judged + 1)); }
failed() { reproduced "$1 (cycle $n: $brkname, recovery by $how)"; }

# cycle N BREAK "BREAK NAME" RECOVERY: one failure/recovery cycle.
cycle() {
	n=$1 brk=$2 brkname=$3 how=$4
	judge=no
	if [ -z "$BREAK" ] || [ "$brk" = "$BREAK" ]; then judge=yes; fi
	note "cycle $n: $brkname, recovery by $how"
	read_procs || inconclusive "cycle $n: the master CLI did not answer show proc"
	old=$(current_worker "$PROCS")
	[ -n "$old" ] || inconclusive "cycle $n: show proc lists no current worker"
	code=$(http_within 5)
	[ "$code" = 200 ] || inconclusive "cycle $n: before the cycle the worker answered HTTP ${code:-nothing}"
	out=$(worker_cli "$old" "set table tbl key keep-$n data.gpc0 $n")
	[ -z "$out" ] || inconclusive "cycle $n: set table on worker $old answered: $out"
	read_procs || inconclusive "cycle $n: the master CLI did not answer show proc"
	was=$(failed_count "$PROCS")

	cp "$HERE/broken-$brk.cfg" "$DIR/broken.cfg" || inconclusive "no broken-$brk.cfg beside the script"
	if "$HAPROXY" -c -f "$DIR/broken.cfg" >"$DIR/check.log" 2>&1; then
		inconclusive "cycle $n: haproxy -c accepts the config with $brkname: it is no break on this build"
	fi
	note "haproxy -c refuses the broken config: $(grep -m 1 ALERT "$DIR/check.log")"
	cp "$DIR/broken.cfg" "$DIR/haproxy.cfg"
	kill -USR2 "$MASTER"

	# Until show proc counts one more failed reload (or BOUND), the master watched.
	t=$(deadline "$BOUND")
	counted=no answered=no now=
	while before "$t" && alive "$MASTER"; do
		if read_procs; then
			answered=yes
			now=$(failed_count "$PROCS")
			if [ "${now:-0}" -gt "${was:-0}" ]; then
				counted=yes
				break
			fi
		fi
		nap
	done
	if ! alive "$MASTER"; then
		ended
		[ "$judge" = yes ] && [ "$CHECK" = master-survives ] && failed "the master died after the failed reload: $ENDED"
		inconclusive "the master died after the failed reload of cycle $n ($brkname, $ENDED): nothing else can be checked"
	fi
	[ "$answered" = yes ] || inconclusive "cycle $n: the master CLI never answered show proc after the failed reload"
	note "show proc after the failed reload: failed ${was:-?} -> ${now:-?}"
	if [ "$judge" = yes ]; then
		case $CHECK in
		master-survives) held "$n" "the master runs and answers show proc" ;;
		failed-reload-counted)
			[ "$counted" = yes ] || failed "show proc never counted the failed reload within ${BOUND} s (failed: ${was:-?} -> ${now:-?})"
			held "$n" "failed: $was -> $now" ;;
		old-worker-kept)
			listed "$PROCS" "$old" || failed "the old worker $old is gone after the failed reload"
			held "$n" "worker $old still listed" ;;
		no-new-worker)
			cur=$(current_worker "$PROCS")
			[ -z "$cur" ] || [ "$cur" = "$old" ] || failed "a new worker $cur started although the config could not load"
			held "$n" "no new worker" ;;
		old-worker-serves)
			code=$(http_within 10)
			if [ "$code" != 200 ]; then
				[ -n "$code" ] && failed "the old worker answered HTTP $code after the failed reload"
				[ -n "$(worker_cli "$old" "show info")" ] || inconclusive "cycle $n: no HTTP answer, and worker $old's CLI did not answer either"
				failed "the old worker gave no HTTP answer after the failed reload (its CLI answers)"
			fi
			held "$n" "HTTP 200" ;;
		table-kept)
			tb=$(worker_cli "$old" "show table tbl key keep-$n")
			case $tb in *"# table:"*) ;; *) inconclusive "cycle $n: show table tbl on worker $old did not answer" ;; esac
			got=$(printf '%s\n' "$tb" | sed -n "s/.* key=keep-$n .*gpc0=\([0-9][0-9]*\).*/\1/p")
			[ "$got" = "$n" ] || failed "the old worker's table entry is ${got:-absent} after the failed reload, want gpc0=$n"
			held "$n" "keep-$n gpc0=$n" ;;
		master-takes-signals)
			usr2 SigBlk
			case $? in 0) failed "the master blocks SIGUSR2 after the failed reload" ;; 2) inconclusive "cycle $n: /proc/$MASTER/status unreadable" ;; esac
			if usr2 SigPnd || usr2 ShdPnd; then failed "SIGUSR2 is left pending on the master after the failed reload"; fi
			held "$n" "SIGUSR2 neither blocked nor pending" ;;
		esac
	fi

	# Recovery: the good config back, the next reload.
	cp "$HERE/haproxy.cfg" "$DIR/haproxy.cfg"
	case $how in
	SIGUSR2) kill -USR2 "$MASTER" ;;
	*) master_cli reload >/dev/null ;;
	esac
	t=$(deadline "$BOUND")
	new=
	while before "$t" && alive "$MASTER"; do
		if read_procs; then
			cur=$(current_worker "$PROCS")
			if [ -n "$cur" ] && [ "$cur" != "$old" ]; then
				new=$cur
				break
			fi
		fi
		nap
	done
	if [ -z "$new" ]; then
		if ! alive "$MASTER"; then
			ended
			inconclusive "the master died on the recovery reload of cycle $n ($ENDED)"
		fi
		[ "$judge" = yes ] && [ "$CHECK" = next-reload-works ] && failed "the next reload ($how, good config) started no new worker within ${BOUND} s"
		inconclusive "cycle $n: the recovery reload ($how) started no new worker within ${BOUND} s: later steps cannot run"
	fi
	note "recovery by $how: new worker $new"
	if [ "$judge" = yes ]; then
		case $CHECK in
		next-reload-works) held "$n" "new worker $new" ;;
		new-worker-serves)
			code=$(http_within 10)
			[ "$code" = 200 ] || failed "after the next reload the new worker answered HTTP ${code:-nothing}"
			held "$n" "HTTP 200" ;;
		esac
	fi
}

pick_ports
cp "$HERE/haproxy.cfg" "$DIR/haproxy.cfg" || inconclusive "no haproxy.cfg beside the script"
"$HAPROXY" -c -f "$DIR/haproxy.cfg" >"$DIR/check.log" 2>&1 ||
	inconclusive "haproxy -c refuses the good config: $(grep -m 1 ALERT "$DIR/check.log")"
start
{{range .Cycles}}cycle {{.N}} {{.Break}} {{shq .Name}} {{shq .Recovery}}
{{end}}
[ "$judged" -gt 0 ] || inconclusive "no cycle judged $CHECK"
pass "$CHECK held in $judged cycle(s)${BREAK:+ with $BREAK}"

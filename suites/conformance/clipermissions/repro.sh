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
# One runtime command is sent on a stats socket of a lower level than the
# documentation gives it; the state it would change is read on the admin
# socket before and after. Every exchange ends with `show cli level`, so
# an answer is known to be HAProxy's whole answer.
set -u

SOCKET={{.Socket}}   # the socket the command is sent on
LEVEL={{.Level}}     # the command's documented level
WHAT={{.What}}       # the check: {{.WhatText}}
PORTS="{{.Ports}}"
NEEDS="cp cut paste sort" # the programs it runs that the helpers below do not
{{template "lib" .}}
CMD="{{.Command}}"
PROBE="{{.Probe}}" # how the state it would change is read

# ask_level SOCKET-LEVEL COMMAND: the command's answer on that socket,
# into ANSWER; false when the answer did not end with the socket's level.
ask_level() {
	out=$(ask "$DIR/$1.sock" "$2; show cli level")
	last=$(printf '%s\n' "$out" | sed -e '/^[[:space:]]*$/d' | tail -n 1 | tr -d '[:space:]')
	[ "$last" = "$1" ] || return 1
	ANSWER=$(printf '%s\n' "$out" | sed -e '/^[[:space:]]*$/d' | sed '$d')
}

# state: what PROBE reads on the admin socket, into STATE (one line).
state() {
	case $PROBE in
	table)
		ask_level admin "show table tbl" || return 1
		case $ANSWER in *"# table: tbl"*) ;; *) return 1 ;; esac
		STATE="[$(printf '%s\n' "$ANSWER" | sed -n 's/^0x[0-9a-fA-F]*: key=\([^ ]*\) .*gpc0=\([0-9]*\).*/\1 gpc0=\2/p' | sort | paste -sd, - | sed 's/,/, /g')]" ;;
	map:* | acl:*)
		ask_level admin "show ${PROBE%%:*} ${PROBE#*:}" || return 1
		STATE="[$(printf '%s\n' "$ANSWER" | sed 's/^0x[0-9a-fA-F]* //' | paste -sd, - | sed 's/,/, /g')]" ;;
	info:*)
		ask_level admin "show info" || return 1
		f=${PROBE#info:}
		v=$(printf '%s\n' "$ANSWER" | sed -n "s/^$f: *//p")
		[ -n "$v" ] || return 1
		STATE="$f=$v" ;;
	stat:*)
		ask_level admin "show stat" || return 1
		spec=${PROBE#stat:}
		STATE=$(printf '%s\n' "$ANSWER" | awk -F, -v px="${spec%%:*}" -v sv="$(echo "$spec" | cut -d: -f2)" -v cols="${spec##*:}" '
			NR == 1 { sub(/^# */, ""); for (i = 1; i <= NF; i++) col[$i] = i; next }
			$1 == px && $2 == sv {
				n = split(cols, c, ",")
				for (i = 1; i <= n; i++) printf "%s%s=%s", (i > 1 ? " " : ""), c[i], $(col[c[i]])
				found = 1; exit
			}
			END { if (!found) exit 1 }') || return 1 ;;
	*) return 1 ;;
	esac
}

refused() { [ -n "$1" ] && case $1 in Done*) false ;; *) true ;; esac; }
read_refused() { case $1 in *"Permission denied"* | *"Unknown command"* | *"insufficient privileges"*) true ;; *) false ;; esac; }

pick_ports
printf 'k v0\n' >"$DIR/m.map"
printf '192.0.2.9\n' >"$DIR/a.acl"
cp "$HERE/haproxy.cfg" "$DIR/haproxy.cfg" || inconclusive "no haproxy.cfg beside the script"
"$HAPROXY" -c -f "$DIR/haproxy.cfg" >"$DIR/check.log" 2>&1 ||
	inconclusive "haproxy -c refuses the config: $(grep -m 1 ALERT "$DIR/check.log")"
start
for s in admin operator user; do
	t=$(deadline 5)
	until [ -S "$DIR/$s.sock" ] || ! before "$t"; do nap; done
	[ -S "$DIR/$s.sock" ] || inconclusive "the $s stats socket never appeared"
done

# Setup, as harp's run: requests served, an entry in the table.
for i in 1 2 3 4 5; do
	code=$(http_status "$PORT_{{.WebPort}}")
	[ "$code" = 200 ] || inconclusive "the frontend answered HTTP ${code:-nothing} before the checks"
done
# step SOCKET-LEVEL COMMAND: one of the commands harp sent before the one
# judged, in its order: they make the state the judged one met.
step() {
	ask_level "$1" "$2" || inconclusive "\"$2\" on the $1 socket (a step before the judged command) got no whole answer"
	note "step: \"$2\" on the $1 socket: ${ANSWER:-(no answer: a success)}"
}
{{range .Steps}}step {{.Socket}} "{{.Command}}"
{{end}}
if [ "$WHAT" = read-allowed ]; then
	note "sending \"$CMD\" on the $LEVEL socket (its documented level)"
	ask_level "$LEVEL" "$CMD" || inconclusive "\"$CMD\" on the $LEVEL socket: the answer did not end with the socket's level: what HAProxy said is unknown"
	first=$(printf '%s\n' "$ANSWER" | head -n 1)
	read_refused "$ANSWER" && reproduced "\"$CMD\" refused at its documented level $LEVEL (\"$first\")"
	[ -n "$ANSWER" ] || reproduced "\"$CMD\" got no answer at its documented level $LEVEL"
	pass "\"$CMD\" answered at its documented level $LEVEL (\"$first\")"
fi

state || inconclusive "the state \"$CMD\" would change could not be read before it ($PROBE)"
was=$STATE
note "before: $was"
note "sending \"$CMD\" on the $SOCKET socket (documented level: $LEVEL)"
ask_level "$SOCKET" "$CMD" || inconclusive "\"$CMD\" on the $SOCKET socket: the answer did not end with the socket's level: what HAProxy said is unknown"
GOT=$ANSWER
said=$(printf '%s\n' "$GOT" | head -n 1)
note "answer: ${said:-(none: a success)}"
state || inconclusive "the state \"$CMD\" would change could not be read after it ($PROBE)"
now=$STATE
note "after: $now"
changed=
[ "$was" = "$now" ] || changed="$was -> $now"

if refused "$GOT"; then
	case $WHAT in
	refusal-changes-nothing)
		[ -z "$changed" ] || reproduced "SECURITY: \"$CMD\" (documented $LEVEL) refused on the $SOCKET socket (\"$said\") but changed $changed"
		pass "\"$CMD\" refused on the $SOCKET socket (\"$said\") and nothing changed" ;;
	level-enforced)
		[ -z "$changed" ] && pass "\"$CMD\" refused on the $SOCKET socket (\"$said\") and nothing changed"
		inconclusive "\"$CMD\" was refused but changed $changed: that is the check refusal-changes-nothing, not $WHAT" ;;
	*) inconclusive "\"$CMD\" was refused (\"$said\"): $WHAT is judged on a command answered as a success" ;;
	esac
fi
case $WHAT in
level-enforced)
	[ -n "$changed" ] && reproduced "SECURITY: \"$CMD\" (documented $LEVEL) accepted on the $SOCKET socket and changed $changed"
	inconclusive "\"$CMD\" was answered as a success and changed nothing: that is the check no-false-success, not $WHAT" ;;
no-false-success)
	[ -z "$changed" ] && reproduced "\"$CMD\" (documented $LEVEL) answered as a success on the $SOCKET socket, though it changed nothing"
	inconclusive "\"$CMD\" was accepted and changed $changed: that is the check level-enforced, not $WHAT" ;;
*) inconclusive "\"$CMD\" was answered as a success: $WHAT is judged on a refused command" ;;
esac

#!/usr/bin/env bash
# The baseline for #3519 in `make bench`: a reporter's reproduction script,
# the same steps as harp's suite with fixed sleeps and one check each, on
# the same image and config. Per trial it connects as the remote peer
# twice (a collision: HAProxy keeps the second session), sends nothing,
# sleeps past HAProxy's next reconnect check (at most 2049 ms after the
# collision; the heartbeat check after it comes 5 s later) and reads no_hbt:
# HAProxy killing the replacement at that check is the bug. It prints
# REPRODUCED or PASS with the count, exits 1 or 0 (2 when it could not
# run), and leaves nothing running.
#
# usage: bench/3519.sh IMAGE CONFIG [TRIALS]
set -euo pipefail
img=$1 cfg=$2 trials=${3:-5}
start_sleep=${START_SLEEP:-6} check_sleep=${CHECK_SLEEP:-2.5} settle_sleep=${SETTLE_SLEEP:-1}

name=harp-bench-3519-$$
docker run -d --name "$name" --label harp.bench=1 -p 127.0.0.1::9998 -p 127.0.0.1::10000 \
  -v "$cfg:/etc/haproxy/haproxy.cfg:ro" --entrypoint /usr/sbin/haproxy "$img" \
  -W -db -f /etc/haproxy/haproxy.cfg -S ipv4@0.0.0.0:9999 >/dev/null || exit 2
trap 'docker rm -f "$name" >/dev/null 2>&1' EXIT
port() { docker port "$name" "$1" | head -1 | sed 's/.*://'; }
stats=$(port 9998/tcp) peer=$(port 10000/tcp)

cli() {
  exec 3<>"/dev/tcp/127.0.0.1/$stats" || return 1
  printf '%s\n' "$1" >&3
  timeout 5 cat <&3
  exec 3<&-
}
# no_hbt of the remote peer, from show peers.
no_hbt() { cli "show peers" | grep -A3 'id=remote' | grep -o 'no_hbt=[0-9]*' | head -1 | cut -d= -f2; }

# Whether HAProxy has a session of the remote peer now (its own attempts
# to connect to the remote's address included: a handshake then collides
# with HAProxy's session instead of harp's).
remote_session() { cli "show peers" | grep -A2 'id=remote' | grep -q appctx; }

# A handshake as `remote` on file descriptor $1; HAProxy answers 200.
hello() {
  eval "exec $1<>/dev/tcp/127.0.0.1/$peer"
  printf 'HAProxyS 2.1\nlocal\nremote %d 1\n' $$ >&"$1"
  local status
  read -r -t 2 status <&"$1" && [ "$status" = 200 ]
}

sleep "$start_sleep" # the initial resync (2.6 finishes it after its 5 s timeout)
killed=0 ran=0
for i in $(seq "$trials"); do
  for _ in $(seq 50); do remote_session || break; sleep 0.2; done
  before=$(no_hbt)
  if ! hello 4 || ! { sleep 0.2; hello 5; }; then
    echo "trial $i: a handshake was not answered 200"
    exec 4<&- 5<&-
    continue
  fi
  exec 4<&- # the superseded session's end: HAProxy releases its applet
  sleep "$check_sleep" # past HAProxy's reconnect check, before any heartbeat is due
  after=$(no_hbt)
  exec 5<&-
  ran=$((ran + 1))
  if [ "${after:-0}" -gt "${before:-0}" ]; then
    killed=$((killed + 1))
    echo "trial $i: replacement killed (no_hbt $before -> $after)"
  else
    echo "trial $i: held"
  fi
  sleep "$settle_sleep" # the closed sessions go
done
if [ "$killed" -gt 0 ]; then
  echo "REPRODUCED ($killed of $ran trials)"
  exit 1
fi
[ "$ran" -gt 0 ] || { echo "INCONCLUSIVE (no trial ran)"; exit 2; }
echo "PASS ($ran of $ran trials held)"

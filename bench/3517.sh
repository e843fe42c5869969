#!/usr/bin/env bash
# The baseline for #3517 in `make bench`: what a reporter's reproduction
# script does, the same steps as harp's suite with fixed sleeps and one
# check each, on the same image and config. Its sleeps are the shortest
# that give the right answer on the four Debian builds (2.6.12 finishes its
# initial resync only after its 5 s timeout; a reload's teaching takes well
# under a second). It prints REPRODUCED or PASS with the count, exits 1 or 0
# (2 when it could not run), and leaves nothing running.
#
# usage: bench/3517.sh IMAGE CONFIG [RELOADS [SECTIONS...]]
set -euo pipefail
img=$1 cfg=$2 reloads=${3:-3}
shift 3 2>/dev/null || shift $#
sections=("$@")
[ ${#sections[@]} -gt 0 ] || sections=(first second)
start_sleep=${START_SLEEP:-6} reload_sleep=${RELOAD_SLEEP:-2}

name=harp-bench-3517-$$
docker run -d --name "$name" --label harp.bench=1 -p 127.0.0.1::9998 -p 127.0.0.1::9999 \
  -v "$cfg:/etc/haproxy/haproxy.cfg:ro" --entrypoint /usr/sbin/haproxy "$img" \
  -W -db -f /etc/haproxy/haproxy.cfg -S ipv4@0.0.0.0:9999 >/dev/null || exit 2
trap 'docker rm -f "$name" >/dev/null 2>&1' EXIT
port=$(docker port "$name" 9998/tcp | head -1 | sed 's/.*://')

# One command on the stats socket (bash's /dev/tcp: no socat needed).
cli() {
  exec 3<>"/dev/tcp/127.0.0.1/$port" || return 1
  printf '%s\n' "$1" >&3
  timeout 5 cat <&3
  exec 3<&-
}

sleep "$start_sleep" # the first worker's initial resync
lost=0
for i in $(seq "$reloads"); do
  for s in "${sections[@]}"; do cli "set table $s/marker key 192.0.2.1 data.gpc0 1" >/dev/null; done
  docker kill -s USR2 "$name" >/dev/null
  sleep "$reload_sleep" # the old worker teaches the new one and leaves
  miss=0
  for s in "${sections[@]}"; do
    cli "show table $s/marker" | grep -q 'key=192.0.2.1 .*gpc0=1' || miss=1
  done
  lost=$((lost + miss))
  echo "reload $i: $([ $miss = 0 ] && echo held || echo 'marker lost')"
done
if [ "$lost" -gt 0 ]; then
  echo "REPRODUCED ($lost of $reloads reloads lost a marker)"
  exit 1
fi
echo "PASS ($reloads of $reloads reloads kept every marker)"

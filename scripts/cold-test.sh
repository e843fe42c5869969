#!/usr/bin/env bash
# Measures `make test` the way CI meets it: .ci/run on a fresh clone of
# HEAD, with an empty HARP_CACHE (images' tarballs, ccache, the apt state)
# and GOCACHE, and no harp image in Docker (they are removed: the next run
# here builds them again). Prints the wall time and each package's, and
# keeps the log. Not part of make bench: it takes the machine for about
# 20 minutes.
#
# usage: scripts/cold-test.sh [LOG]
set -uo pipefail
repo=$(git rev-parse --show-toplevel)
work=$(mktemp -d /tmp/harp-cold.XXXXXX)
log=${1:-$work/log}
git clone -q "$repo" "$work/harp" || exit 3
n=$(docker images -q 'harp-*' | sort -u | wc -l)
echo "cold-test: removing $n harp images; clone, caches and log under $work"
docker images --format '{{.Repository}}:{{.Tag}}' | grep '^harp-' | xargs -r docker rmi -f >/dev/null
export HARP_CACHE=$work/cache GOCACHE=$work/gocache
cd "$work/harp" || exit 3
start=$(date +%s)
.ci/run >"$log" 2>&1
rc=$?
took=$(($(date +%s) - start))
echo "cold-test: .ci/run exit $rc after $((took / 60)) min $((took % 60)) s (log: $log)"
grep -aE '^(ok|FAIL|--- FAIL)' "$log" | sed 's/^/  /'
exit $rc

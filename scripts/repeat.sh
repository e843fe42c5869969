#!/bin/sh
# repeat.sh N TARGET: runs `make TARGET` N times (HAPROXY and the suite's
# parameters from the environment) and prints the histogram of verdicts
# per suite and build: how stable a verdict is.
set -u
n=${1:-}; target=${2:-}
case "$n" in ''|*[!0-9]*) echo "repeat: N=$n: want a number of runs" >&2; exit 3;; esac
if [ "$n" -lt 1 ] || [ -z "$target" ]; then
  echo "usage: make repeat N=20 TARGET=test-3517 [HAPROXY=...]" >&2; exit 3
fi
out=$(mktemp); trap 'rm -f "$out"' EXIT
i=0
while [ "$i" -lt "$n" ]; do
  i=$((i + 1))
  make --no-print-directory -s "$target" 2>/dev/null | grep -E '^#[^ ]+ on .*: (PASS|REPRODUCED|INCONCLUSIVE|ERROR)' | tee -a "$out" | sed "s/^/[repeat $i\/$n] /" >&2
done
echo "verdicts over $n runs of $target:"
sed -E 's/^(#[^ ]+ on [^:]+): ([A-Z]+) .*$/\1: \2/' "$out" | sort | uniq -c | sort -rn
echo "with their reasons:"
sort "$out" | uniq -c | sort -rn

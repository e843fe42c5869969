#!/usr/bin/env bash
# Proves a finding's patch series (docs/findings/patches/<finding>/: the
# fix, then its reg-test, as git format-patch wrote them) the way a
# maintainer would: applied with git am to a clean worktree of BASE in
# CLONE, the series' reg-test must FAIL on BASE with the test added and
# PASS on the fix; HAProxy's own reg-tests in AREAS (run by upstream's
# scripts/run-regtests.sh with VTest, REGTESTS_TYPES=default,bug,devel)
# must give the same results with the fix as without it.
#
# usage: scripts/prove-series.sh SERIES-DIR CLONE [BASE] [AREAS...]
#   BASE defaults to 50872daa6 (v3.5-dev5), AREAS to mcli startup
#   seamless-reload stats. Needs bin/harp (it builds BASE and the fix,
#   cached), varnishtest (Debian's varnish) and HARP_VTEST=/path/to/vtest
#   (upstream's VTest2: run-regtests.sh uses options varnishtest lacks).
# Prints one line per check and exits 0 only when every one holds.
set -euo pipefail
series=$(cd "$1" && pwd)
clone=$(cd "$2" && pwd)
base=${3:-50872daa6}
shift $(($# < 3 ? $# : 3))
areas=("$@")
[ ${#areas[@]} -gt 0 ] || areas=(mcli startup seamless-reload stats)
root=$(cd "$(dirname "$0")/.." && pwd)
: "${HARP_VTEST:?HARP_VTEST=/path/to/vtest is needed: VTest2, the runner of run-regtests.sh}"
command -v varnishtest >/dev/null || { echo "prove-series: varnishtest is missing (apt-get install varnish)" >&2; exit 3; }

work=$(mktemp -d /tmp/harp-series-XXXXXX)
cleanup() { git -C "$clone" worktree remove --force "$work/tree" >/dev/null 2>&1 || true; rm -rf "$work"; }
trap cleanup EXIT
git -C "$clone" worktree add -q --detach "$work/tree" "$base"
cd "$work/tree"
git -c user.name=harp -c user.email=harp@example.invalid am -q "$series"/*.patch
echo "applied $(ls "$series"/*.patch | wc -l) patches to $(git rev-parse --short=9 "$base"):"
git log --format='  %h %s' "$base"..HEAD
vtc=$(git diff --name-only HEAD~1 HEAD -- 'reg-tests/*.vtc')
[ -n "$vtc" ] || { echo "prove-series: the last patch adds no reg-test" >&2; exit 3; }

# The base and the fix, built by harp (a minimal linux-glibc build each).
binary() { # binary REF: the binary harp built for that commit, copied out of its image
	local tag id
	tag=$("$root/bin/harp" images --haproxy "git:$work/tree@$1" | tail -1 | cut -f3)
	id=$(docker create "$tag" /bin/true)
	docker cp -q "$id:/usr/sbin/haproxy" "$work/haproxy-$1" && docker rm -f "$id" >/dev/null
	echo "$work/haproxy-$1"
}
without=$(binary "$(git rev-parse HEAD~2)")
with=$(binary "$(git rev-parse HEAD~1)")
echo "without the fix: $without"
echo "with the fix:    $with"

fails=0
check() { # check WHAT WANT GOT
	if [ "$2" = "$3" ]; then echo "  ok   $1: $3"; else echo "  FAIL $1: $3, want $2"; fails=$((fails + 1)); fi
}
result() { # result RUNNER BINARY: the reg-test's result
	HAPROXY_ARGS="-dM -dI -dW" HAPROXY_PROGRAM=$2 "$1" -k -t 10 "$vtc" 2>&1 | awk '/^#[ \t]+top[ \t]+TEST/{print $5}' | tail -1
}
echo "the series' reg-test ($vtc), as run-regtests.sh runs haproxy (-dM -dI -dW):"
for r in varnishtest "$HARP_VTEST"; do
	check "$(basename "$r") without the fix" FAILED "$(result "$r" "$without")"
	check "$(basename "$r") with the fix" passed "$(result "$r" "$with")"
done
echo "HAProxy's own reg-tests in ${areas[*]} (run-regtests.sh, VTest):"
dirs=()
for a in "${areas[@]}"; do dirs+=("reg-tests/$a"); done
upstream() { # upstream BINARY: run-regtests.sh's count line, the series' own test set aside
	HAPROXY_PROGRAM=$1 VTEST_PROGRAM=$HARP_VTEST REGTESTS_TYPES=default,bug,devel \
		sh scripts/run-regtests.sh "${dirs[@]}" 2>&1 | grep -a 'tests failed' || echo "run-regtests.sh printed no count"
}
mv "$vtc" "$work/own.vtc"
without_count=$(upstream "$without")
with_count=$(upstream "$with")
mv "$work/own.vtc" "$vtc"
echo "  without the fix: $without_count"
check "with the fix, the same" "$without_count" "$with_count"
exit $((fails > 0))

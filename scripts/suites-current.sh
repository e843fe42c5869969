#!/bin/sh
# Exits 0 when suites/all/suites.go already imports exactly the packages
# under suites/ that call suite.Register (what `go run ./suites/all/gen`
# writes), so a build can skip compiling the generator (6 s on a cold
# cache: a tenth of a newcomer's first verdict). Any doubt exits 1, and
# the generator runs. The generator stays the one authority: a unit test
# checks the file it writes.
cd "$(dirname "$0")/.." || exit 1
want=$(grep -rl --include='*.go' 'suite.Register(' suites 2>/dev/null |
	grep -v -e '_test\.go$' -e '^suites/all/' -e '/internal/' -e '/testdata/' -e '/\.' |
	while read -r f; do dirname "$f"; done | LC_ALL=C sort -u)
have=$(sed -n 's|^	_ "github.com/harp-project/harp/\(.*\)"$|\1|p' suites/all/suites.go 2>/dev/null | LC_ALL=C sort -u)
[ -n "$want" ] && [ "$want" = "$have" ]

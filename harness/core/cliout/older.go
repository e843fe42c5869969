package cliout

import (
	"regexp"
	"strconv"
)

// Older says whether version (haproxy -vv's, "2.6.12-1", "3.5-dev5") is
// older than since ("2.7"): a check a build is too old for (what it uses
// came in since) is not applicable to it. An empty since is no bound
// (false), and so is a version or since that names no major.minor.
func Older(version, since string) bool {
	if since == "" {
		return false
	}
	parse := func(s string) (int, int, bool) {
		m := majorMinorRe.FindStringSubmatch(s)
		if m == nil {
			return 0, 0, false
		}
		a, _ := strconv.Atoi(m[1])
		b, _ := strconv.Atoi(m[2])
		return a, b, true
	}
	a1, b1, ok1 := parse(version)
	a2, b2, ok2 := parse(since)
	return ok1 && ok2 && (a1 < a2 || a1 == a2 && b1 < b2)
}

var majorMinorRe = regexp.MustCompile(`^(\d+)\.(\d+)`)

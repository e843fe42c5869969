package cliout

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Loops is the worker's poll-loop count from `show activity`: the total
// (3.x: "loops: 1234 [ 617 617 ]"; one thread: "loops: 1234"), or the sum
// of the per-thread values where only those are printed (2.6:
// "loops: [ 617 617 ]").
func Loops(out string) (int64, error) { return Activity(out, "loops") }

// Activity is one counter of `show activity` (loops, poll_drop_fd, ...),
// read as Loops reads its: the total, or the sum of the per-thread values.
func Activity(out, name string) (int64, error) {
	re, err := regexp.Compile(`(?m)^` + regexp.QuoteMeta(name) + `:\s*(\d+)?\s*(?:\[([\d ]*)\])?`)
	if err != nil {
		return 0, err
	}
	m := re.FindStringSubmatch(out)
	if m == nil || m[1] == "" && strings.TrimSpace(m[2]) == "" {
		return 0, fmt.Errorf("no %s line in `show activity`: %q", name, firstLine(out))
	}
	if m[1] != "" {
		return strconv.ParseInt(m[1], 10, 64)
	}
	var sum int64
	for _, f := range strings.Fields(m[2]) {
		v, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("show activity %s: %q", name, m[0])
		}
		sum += v
	}
	return sum, nil
}

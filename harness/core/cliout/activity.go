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
func Loops(out string) (int64, error) {
	m := loopsRe.FindStringSubmatch(out)
	if m == nil {
		return 0, fmt.Errorf("no loops line in `show activity`: %q", firstLine(out))
	}
	if m[1] != "" {
		return strconv.ParseInt(m[1], 10, 64)
	}
	var sum int64
	for _, f := range strings.Fields(m[2]) {
		v, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("show activity loops: %q", m[0])
		}
		sum += v
	}
	return sum, nil
}

var loopsRe = regexp.MustCompile(`(?m)^loops:\s*(\d+)?\s*(?:\[([\d ]*)\])?`)

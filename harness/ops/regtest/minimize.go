package regtest

import (
	"fmt"
	"regexp"
	"strings"
)

// A vtc's parts for a minimizer: every line that can go alone (a config
// line, a send or expect), and every top-level statement (a block with
// its lines) that can go whole. The lines that hold the file together (a
// block's opening and closing lines, the test's title) never go alone.

// Unit is a removable part of a vtc: the lines [From, To) of its text.
type Unit struct {
	From, To int
	Block    bool // a whole top-level statement
}

// Units are the removable parts of a vtc (its lines split at '\n'),
// whole statements first, then single lines inside blocks; comments and
// blank lines are not units (Strip drops them).
func Units(lines []string) []Unit {
	var blocks, inner, block []Unit
	depth := 0
	start := -1
	expects := 0 // in the current top-level block
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		opens, closes := braces(t)
		if depth == 0 {
			start, block, expects = i, nil, 0
		} else if opens == 0 && closes == 0 {
			if strings.HasPrefix(t, "expect ") {
				expects++
			}
			block = append(block, Unit{From: i, To: i + 1})
		}
		depth += opens - closes
		if depth <= 0 {
			depth = 0
			// A CLI block's only expect stays (the block can go whole):
			// without one VTest sends and moves on without HAProxy's
			// answer, and the next step races with the command.
			for _, u := range block {
				if expects == 1 && strings.HasPrefix(strings.TrimSpace(lines[u.From]), "expect ") {
					continue
				}
				inner = append(inner, u)
			}
			// The title, the requirements (a version limit, a feature of
			// the build) and the environment (setenv: HAProxy's arguments
			// under upstream's runner) stay: they say where and how the
			// test applies, which two builds cannot tell.
			if !strings.HasPrefix(t, "varnishtest ") && !strings.HasPrefix(t, "feature ") && !strings.HasPrefix(t, "setenv ") {
				blocks = append(blocks, Unit{From: start, To: i + 1, Block: true})
			}
		}
	}
	return append(blocks, inner...)
}

// braces counts a line's block openings and closings: a '{' that ends it,
// a '}' that starts it (VTest's blocks; braces inside quotes or config
// lines do not count).
func braces(t string) (opens, closes int) {
	if strings.HasPrefix(t, "}") {
		closes++
	}
	if strings.HasSuffix(t, "{") {
		opens++
	}
	return opens, closes
}

// Strip drops comments and blank lines, except the #REGTEST_TYPE line
// that run-regtests.sh reads.
func Strip(vtc string) string {
	var out []string
	for _, l := range strings.Split(vtc, "\n") {
		t := strings.TrimSpace(l)
		if t == "" || (strings.HasPrefix(t, "#") && !strings.HasPrefix(t, "#REGTEST_TYPE=")) {
			continue
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n") + "\n"
}

// Without is lines without unit u.
func Without(lines []string, u Unit) []string {
	return append(append([]string{}, lines[:u.From]...), lines[u.To:]...)
}

// Distinguishes says whether a candidate still shows the finding: FAILED
// on the bad build for the reason the original failed there (numbers
// aside: a line of the file, a pid), and passed on the good one.
func Distinguishes(bad, good Outcome, badWhy string) bool {
	return bad.Result == Failed && good.Result == Passed && SameWhy(bad.Why, badWhy)
}

var digits = regexp.MustCompile(`[0-9]+`)

// SameWhy says whether two failures have the same reason, numbers aside.
func SameWhy(a, b string) bool {
	return digits.ReplaceAllString(a, "N") == digits.ReplaceAllString(b, "N")
}

// Oracle runs a candidate vtc on the bad and the good build. err is the
// harness failing to run it (never a candidate that does not show it).
type Oracle func(vtc string) (bad, good Outcome, err error)

// Minimized is a minimizer's result.
type Minimized struct {
	VTC       string
	LinesFrom int // the original's lines, comments included
	LinesTo   int
	Runs      int // candidates run, each on both builds
	Removed   int // units removed
	BadWhy    string
}

// Minimize reduces vtc while it still shows the finding (Distinguishes):
// first without its comments, then one unit at a time, whole statements
// before single lines, again and again until no unit can go (a 1-minimal
// test: removing any one part loses the finding). maxRuns bounds the
// candidates tried. The original must show the finding, or it is an error.
func Minimize(vtc string, run Oracle, maxRuns int) (Minimized, error) {
	m := Minimized{LinesFrom: strings.Count(strings.TrimRight(vtc, "\n"), "\n") + 1}
	bad, good, err := run(vtc)
	m.Runs++
	if err != nil {
		return m, err
	}
	if bad.Result != Failed || good.Result != Passed {
		return m, fmt.Errorf("the test does not show the finding to begin with: %s on the bad build (%s), %s on the good one (%s)", bad.Result, bad.Why, good.Result, good.Why)
	}
	m.BadWhy = bad.Why
	try := func(cand string) (bool, error) {
		if m.Runs >= maxRuns {
			return false, nil
		}
		m.Runs++
		b, g, err := run(cand)
		if err != nil {
			return false, err
		}
		return Distinguishes(b, g, m.BadWhy), nil
	}
	cur := vtc
	if s := Strip(vtc); s != vtc {
		ok, err := try(s)
		if err != nil {
			return m, err
		}
		if ok {
			cur = s
		}
	}
	lines := strings.Split(strings.TrimRight(cur, "\n"), "\n")
	for changed := true; changed && m.Runs < maxRuns; {
		changed = false
		for i := 0; m.Runs < maxRuns; {
			us := Units(lines)
			if i >= len(us) {
				break
			}
			cand := Without(lines, us[i])
			ok, err := try(strings.Join(cand, "\n") + "\n")
			if err != nil {
				return m, err
			}
			if !ok {
				i++
				continue
			}
			// The units after it moved up: the same index is the next one.
			lines, changed = cand, true
			m.Removed++
		}
	}
	m.VTC = strings.Join(lines, "\n") + "\n"
	m.LinesTo = len(lines)
	return m, nil
}

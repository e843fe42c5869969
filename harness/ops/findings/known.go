package findings

import (
	"fmt"
	"sort"
	"strings"

	"github.com/harp-project/harp/harness/ops/report"
)

// Checks lists the check ids the runs recorded for suite (held or
// failed), sorted; when no run recorded the suite itself, those recorded
// under the suite it was split from (report.SplitFrom), whose checks
// answer for it.
func Checks(runs []Scanned, suite string) []string {
	own, former := map[string]bool{}, map[string]bool{}
	for _, sc := range runs {
		for _, r := range sc.Run.Results {
			for _, c := range r.Checks {
				switch {
				case r.Suite == suite:
					own[c.ID] = true
				case report.Answers(r.Suite, suite):
					former[c.ID] = true
				}
			}
		}
	}
	if len(own) == 0 {
		own = former
	}
	out := make([]string, 0, len(own))
	for id := range own {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

// CheckKnown says, before anything is built, whether the check a finding
// signature names is one the runs recorded for its suite: a misspelt id
// would make every step INCONCLUSIVE ("not observed") only after building
// and running each. A crash or a suite's property names no check.
func CheckKnown(runs []Scanned, sig string) error {
	suite := SuiteOf(sig)
	check, ok := strings.CutPrefix(sig, suite+"/")
	if suite == "" || !ok {
		return nil
	}
	known := Checks(runs, suite)
	if len(known) == 0 {
		return fmt.Errorf("check %q of suite %s cannot be confirmed: no run under the reports recorded a check of %s (run the suite once, or give --reports where its runs are)", check, suite, suite)
	}
	for _, k := range known {
		if k == check {
			return nil
		}
	}
	msg := fmt.Sprintf("suite %s has no check %q in the runs recorded", suite, check)
	if near := Near(check, known, 5); len(near) > 0 {
		return fmt.Errorf("%s; near matches: %s", msg, strings.Join(near, ", "))
	}
	if len(known) > 12 {
		return fmt.Errorf("%s; its checks: %s and %d more", msg, strings.Join(known[:12], ", "), len(known)-12)
	}
	return fmt.Errorf("%s; its checks: %s", msg, strings.Join(known, ", "))
}

// Near lists, closest first, at most n of known that look like a typing
// slip of id: an edit distance of at most a third of its length (2 at
// least), or one holding the other.
func Near(id string, known []string, n int) []string {
	type hit struct {
		s string
		d int
	}
	var hits []hit
	limit := max(2, len(id)/3)
	for _, k := range known {
		d := distance(id, k)
		if d <= limit || strings.Contains(k, id) || strings.Contains(id, k) {
			hits = append(hits, hit{k, d})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].d < hits[j].d })
	var out []string
	for _, h := range hits[:min(n, len(hits))] {
		out = append(out, h.s)
	}
	return out
}

// distance is the Levenshtein distance of a and b, in bytes.
func distance(a, b string) int {
	prev, cur := make([]int, len(b)+1), make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			sub := prev[j-1]
			if a[i-1] != b[j-1] {
				sub++
			}
			cur[j] = min(sub, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

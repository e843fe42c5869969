// Package text has the small text helpers error messages share.
package text

import (
	"fmt"
	"sort"
	"strings"
)

// LastLines returns the last n lines of s (for log tails in errors).
func LastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// MissingCounts says how many keys each node lacks, nodes in name order:
// "node2 lacks 1, node3 lacks 4".
func MissingCounts(miss map[string][]string) string {
	var names []string
	for k := range miss {
		names = append(names, k)
	}
	sort.Strings(names)
	var parts []string
	for _, name := range names {
		parts = append(parts, fmt.Sprintf("%s lacks %d", name, len(miss[name])))
	}
	return strings.Join(parts, ", ")
}

// DistinctKeys is how many keys a node -> keys map names, each counted
// once however many nodes lack it.
func DistinctKeys(m map[string][]string) int {
	keys := map[string]bool{}
	for _, ks := range m {
		for _, k := range ks {
			keys[k] = true
		}
	}
	return len(keys)
}

// Sum is the counts added up.
func Sum(m map[string]int) int {
	s := 0
	for _, v := range m {
		s += v
	}
	return s
}

// Counts lists "name count" in order, prefix trimmed from each name:
// "t0295 10, t0296 10". Past most entries (0: no limit) the rest is
// "and N more <noun>".
func Counts(m map[string]int, prefix string, most int, noun string) string {
	var ts []string
	for name, n := range m {
		ts = append(ts, fmt.Sprintf("%s %d", strings.TrimPrefix(name, prefix), n))
	}
	sort.Strings(ts) // the lines, not the names: as each judge sorted them
	if most > 0 && len(ts) > most {
		ts = append(ts[:most], fmt.Sprintf("and %d more %s", len(ts)-most, noun))
	}
	return strings.Join(ts, ", ")
}

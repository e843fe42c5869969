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

package cliout

import (
	"slices"
	"strings"
)

// RefusedKeyword is the config parser's alert line, in a failed start's
// output, refusing a keyword: an "unknown keyword" or one that names any
// of words; "" when there is none (a start that failed otherwise, even
// with a log that mentions the words).
func RefusedKeyword(out string, words ...string) string {
	for _, l := range strings.Split(out, "\n") {
		if !strings.Contains(l, "ALERT") || !strings.Contains(l, "parsing") {
			continue
		}
		if strings.Contains(l, "unknown keyword") || slices.ContainsFunc(words, func(w string) bool { return strings.Contains(l, w) }) {
			return strings.TrimSpace(l)
		}
	}
	return ""
}

package verdict

import "strings"

// Violation is a judge's violation from its checks: the texts of those
// that failed, in order, joined after prefix ("a syntax error: x; y"),
// or "" when none failed. Every judge that names its checks ends so.
func (cs Checks) Violation(prefix string) string {
	v := cs.Failed()
	if len(v) == 0 {
		return ""
	}
	return prefix + ": " + strings.Join(v, "; ")
}

package text

import "strings"

// FirstLine is s's first line, trimmed, cut to at most max bytes: an
// answer in a message.
func FirstLine(s string, max int) string {
	l := strings.TrimSpace(strings.SplitN(strings.TrimSpace(s), "\n", 2)[0])
	if len(l) > max {
		l = l[:max]
	}
	return l
}

// FirstAlert is s's first line that holds "ALERT" (what HAProxy says
// when a config does not load), trimmed; else its first line.
func FirstAlert(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, "ALERT") {
			return strings.TrimSpace(l)
		}
	}
	return strings.TrimSpace(strings.SplitN(s, "\n", 2)[0])
}

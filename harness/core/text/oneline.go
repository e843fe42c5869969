package text

import "strings"

// OneLine is s on one line (each run of spaces and line breaks one
// space), cut to max bytes with "..." after it: a whole answer in a note
// or a message.
func OneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > max {
		s = s[:max] + "..."
	}
	return s
}

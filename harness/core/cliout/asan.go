package cliout

import (
	"regexp"
	"strconv"
	"strings"
)

// ASanReport is one AddressSanitizer error report from a process's output.
type ASanReport struct {
	PID int `json:"pid"`
	// Kind is what ASan found: heap-use-after-free, heap-buffer-overflow,
	// double-free, ...
	Kind string `json:"kind"`
	// Summary is ASan's SUMMARY line: the kind and where it happened.
	Summary string `json:"summary,omitempty"`
	Text    string `json:"text"` // the whole report, stacks included
}

var (
	asanStart = regexp.MustCompile(`^==(\d+)==ERROR: AddressSanitizer: (\S+)`)
	asanEnd   = regexp.MustCompile(`^==(\d+)==ABORTING`)
)

// maxASanReport bounds one report: a deep recursion's stack must not
// fill a report.
const maxASanReport = 64 << 10

// ParseASan finds the AddressSanitizer reports in a node's output (its
// workers write them on stderr, lines of other processes may come
// between). A report runs from its ERROR line to the same process's
// ABORTING line, or to the end of the output.
func ParseASan(logs string) []ASanReport {
	var out []ASanReport
	var cur *ASanReport
	var b strings.Builder
	flush := func() {
		if cur != nil {
			cur.Text = strings.TrimSpace(b.String())
			if len(cur.Text) > maxASanReport {
				cur.Text = cur.Text[:maxASanReport] + "\n[report cut at 64 KiB]"
			}
			out = append(out, *cur)
		}
		cur = nil
		b.Reset()
	}
	for _, line := range strings.Split(logs, "\n") {
		if m := asanStart.FindStringSubmatch(line); m != nil {
			flush()
			pid, _ := strconv.Atoi(m[1])
			cur = &ASanReport{PID: pid, Kind: m[2]}
		}
		if cur == nil {
			continue
		}
		b.WriteString(line + "\n")
		if s, ok := strings.CutPrefix(line, "SUMMARY: AddressSanitizer: "); ok {
			cur.Summary = strings.TrimSpace(s)
		}
		if m := asanEnd.FindStringSubmatch(line); m != nil && m[1] == strconv.Itoa(cur.PID) {
			flush()
		}
	}
	flush()
	return out
}

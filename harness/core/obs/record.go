package obs

import (
	"fmt"
	"strings"
)

// Record is what one named check saw, as its judge reads it: an unmet
// precondition, the violations, what held (for the report), and the first
// reading harp could not make (an unknown observation: the check then
// decides nothing, Unknowns). Embedded in a suite's facts, its fields read
// as the facts' own, in the evidence and in Unknowns' paths.
type Record struct {
	Unmet      string           `json:"unmet,omitempty"`
	Violations []string         `json:"violations,omitempty"`
	Observed   []string         `json:"observed,omitempty"` // what held, for the report
	Unread     Optional[string] `json:"unread"`
}

// NotRead records a failed observation (the first one is kept).
func (r *Record) NotRead(format string, args ...any) {
	if r.Unread.State == "" {
		r.Unread = Opt(Failure[string](format, args...))
	}
}

// Violated records a violation seen.
func (r *Record) Violated(format string, args ...any) {
	r.Violations = append(r.Violations, fmt.Sprintf(format, args...))
}

// Held records what held, for the report.
func (r *Record) Held(format string, args ...any) {
	r.Observed = append(r.Observed, fmt.Sprintf(format, args...))
}

// Seen is what held and then what was violated, in the order recorded.
func (r Record) Seen() []string {
	return append(append([]string(nil), r.Observed...), r.Violations...)
}

// Decide is the check's verdict, each text led by its name: an unmet
// precondition makes it say nothing, whatever it saw; otherwise every
// violation it saw counts.
func (r Record) Decide(name string) (violation, unmet string) {
	if r.Unmet != "" {
		return "", name + ": " + r.Unmet
	}
	if len(r.Violations) > 0 {
		return name + ": " + strings.Join(r.Violations, "; "), ""
	}
	return "", ""
}

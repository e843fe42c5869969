// Package judge decides an upstream-fixes case from what it observed:
// each case's expectation, and pure functions of recorded facts, with
// nothing of Docker's in their imports, so that `make unit` tests them
// alone (on facts captured from real builds, testdata/facts-*.json). How
// each case reaches HAProxy is the suite's.
package judge

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/harp-project/harp/harness/verdict"
)

// Case is what one upstream fix's case is and what its answer must be.
type Case struct {
	ID    string
	Fix   string // the upstream commit
	Since string // the first major.minor that has what the case uses ("": every)
	Until string // the first major.minor that no longer has it ("": none)
	// Does and Expects say in words what the case sends and expects.
	Does    string
	Expects string
	// Want judges the answer (and the answer to the suite's Then, after
	// "\n--- then\n").
	Want func(answer string) (ok bool, why string)
}

// Facts are what one case observed.
type Facts struct {
	Case string `json:"case"`
	Fix  string `json:"fix"`
	// Skip: the build predates what the case uses.
	Skip string `json:"not_applicable,omitempty"`
	// HarpErr: harp could not run the case (no HAProxy answer is judged).
	HarpErr string `json:"harp_error,omitempty"`
	Answer  string `json:"answer"`
	// Died: the worker did not answer show info within 5s after the case.
	Died bool `json:"worker_died,omitempty"`
}

// Check decides one case from its facts: its check, a violation when the
// check failed, an unmet precondition when harp could not run it.
func Check(f Facts) (cs verdict.Checks, violation, unmet string) {
	c, ok := byID(f.Case)
	switch {
	case !ok:
		return nil, "", "no case " + f.Case
	case f.Skip != "":
		return nil, "", ""
	case f.HarpErr != "":
		return nil, "", f.Case + ": " + f.HarpErr
	case f.Died:
		text := fmt.Sprintf("%s (upstream %s): the worker died on %s", c.ID, c.Fix, c.Does)
		cs.Fail(c.ID, text)
		return cs, text, ""
	}
	if ok, why := c.Want(f.Answer); !ok {
		text := fmt.Sprintf("%s (upstream %s): %s", c.ID, c.Fix, why)
		cs.Fail(c.ID, text)
		return cs, text, ""
	}
	cs.Hold(c.ID)
	return cs, "", ""
}

func byID(id string) (Case, bool) {
	for _, c := range Cases {
		if c.ID == id {
			return c, true
		}
	}
	return Case{}, false
}

// Older says whether version (haproxy -vv's, "2.6.12-1", "3.5-dev5") is
// older than since ("2.7").
func Older(ver, since string) bool {
	if since == "" {
		return false
	}
	parse := func(s string) (int, int, bool) {
		m := regexp.MustCompile(`^(\d+)\.(\d+)`).FindStringSubmatch(s)
		if m == nil {
			return 0, 0, false
		}
		a, _ := strconv.Atoi(m[1])
		b, _ := strconv.Atoi(m[2])
		return a, b, true
	}
	a1, b1, ok1 := parse(ver)
	a2, b2, ok2 := parse(since)
	return ok1 && ok2 && (a1 < a2 || a1 == a2 && b1 < b2)
}

// OneLine is s on one line, cut at 200 bytes.
func OneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

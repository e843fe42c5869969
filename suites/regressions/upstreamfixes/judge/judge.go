// Package judge decides an upstream-fixes case from what it observed:
// each case's expectation, and pure functions of recorded facts, with
// nothing of Docker's in their imports, so that `make unit` tests them
// alone (on facts captured from real builds, testdata/facts-*.json). How
// each case reaches HAProxy is the suite's.
package judge

import (
	"fmt"

	"github.com/harp-project/harp/fixtures"
	"github.com/harp-project/harp/harness/fixcase"
	"github.com/harp-project/harp/harness/text"
	"github.com/harp-project/harp/harness/verdict"
)

// Case is one upstream fix's case (its file under
// fixtures/upstream-fixes) and what its answer must be.
type Case struct {
	fixcase.Case
	// Want judges the answer (and the answer to the suite's Then, after
	// fixcase.ThenMark): the file's rule, or goWants' function for the
	// case when the file says `want go`.
	Want func(answer string) (ok bool, why string)
}

// Cases in the order they run (each file's order): those of one
// exchange, those of several steps or a node of their own, then the
// half-closed peers connection (left open by 3.3.0: a stream that would
// hold back later peers sessions), and last the one that crashes a bad
// build's shared node.
var Cases = func() []Case {
	cs, err := fixcase.Load(fixtures.UpstreamFixes, "upstream-fixes")
	if err != nil {
		panic(err) // the embedded files; TestCaseFiles names the bad line
	}
	var out []Case
	for _, c := range cs {
		want := c.Rule.Eval
		if c.Rule.Go {
			want = goWants[c.ID]
		}
		out = append(out, Case{c, want})
	}
	return out
}()

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

// OneLine is s on one line, cut at 200 bytes.
func OneLine(s string) string { return text.OneLine(s, 200) }

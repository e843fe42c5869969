package verdict

import (
	"regexp"
	"sort"
	"strings"
)

// Check is one named expectation a judge evaluated on a trial. Its ID is
// stable across trials, builds and runs ("failed-reload-counted"), so a
// finding is the suite and the check that failed, not the text with this
// trial's counts. A check whose facts were not observed is not listed: it
// neither held nor failed.
type Check struct {
	ID   string `json:"id"`
	Held bool   `json:"held"`
	Text string `json:"text,omitempty"` // what failed, with this trial's numbers
}

// Checks collects a judge's checks in the order it evaluates them.
type Checks []Check

// Hold records a check that held.
func (cs *Checks) Hold(id string) { *cs = append(*cs, Check{ID: id, Held: true}) }

// Fail records a check that failed with what was seen.
func (cs *Checks) Fail(id, text string) { *cs = append(*cs, Check{ID: id, Text: text}) }

// Expect records id as held when ok, else as failed with text.
func (cs *Checks) Expect(id string, ok bool, text string) {
	if ok {
		cs.Hold(id)
	} else {
		cs.Fail(id, text)
	}
}

// Failed are the texts of the checks that failed, in order.
func (cs Checks) Failed() []string {
	var out []string
	for _, c := range cs {
		if !c.Held {
			out = append(out, c.Text)
		}
	}
	return out
}

// Tally is how often one check held and failed over a result's trials.
type Tally struct {
	ID     string `json:"id"`
	Failed int    `json:"failed"`
	Held   int    `json:"held"`
	// Example is the first failure's text.
	Example string `json:"example,omitempty"`
}

// TallyChecks counts each check over the trials whose verdict counts: a
// trial that is inconclusive (an unmet precondition, an unknown
// observation) counts for nothing, as it does in Decide.
func TallyChecks(ts []Trial) []Tally {
	by := map[string]*Tally{}
	var order []string
	for _, t := range ts {
		if t.UnmetReason() != "" {
			continue
		}
		for _, c := range t.Checks {
			k := by[c.ID]
			if k == nil {
				k = &Tally{ID: c.ID}
				by[c.ID] = k
				order = append(order, c.ID)
			}
			if c.Held {
				k.Held++
			} else {
				k.Failed++
				if k.Example == "" {
					k.Example = c.Text
				}
			}
		}
	}
	sort.Strings(order)
	out := make([]Tally, 0, len(order))
	for _, id := range order {
		out = append(out, *by[id])
	}
	return out
}

var slugRun = regexp.MustCompile(`[^a-z0-9]+`)

// Slug makes a check id part from free text: "set table" -> "set-table".
func Slug(s string) string {
	return strings.Trim(slugRun.ReplaceAllString(strings.ToLower(s), "-"), "-")
}

// Qualified adds a part to every id ("master-survives" ->
// "master-survives.syntax-error"): the variant of a trial a check is
// about, when a bug shows on one variant only.
func (cs Checks) Qualified(part string) Checks {
	if part == "" {
		return cs
	}
	for i := range cs {
		cs[i].ID += "." + part
	}
	return cs
}

// KindCheck is the one check a trial of a kind decides, where a suite
// checks one property kind by kind (each kind a variant a bug may break
// alone): the kind's slug, held when the trial saw no violation, failed
// with its violation, and not listed when a precondition was unmet.
func KindCheck(kind, violation, unmet string) Checks {
	switch {
	case unmet != "":
		return nil
	case violation != "":
		return Checks{{ID: Slug(kind), Text: violation}}
	}
	return Checks{{ID: Slug(kind), Held: true}}
}

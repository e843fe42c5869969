package report

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/harp-project/harp/harness/verdict"
)

// Change is one cell whose verdict moved since the previous run.
type Change struct {
	Kind   string          `json:"kind"` // regressed, fixed, newly inconclusive, new, ...
	Suite  string          `json:"suite"`
	Build  string          `json:"build"`
	Before verdict.Verdict `json:"before,omitempty"`
	After  verdict.Verdict `json:"after,omitempty"`
}

func (c Change) String() string {
	if c.After == "" {
		return fmt.Sprintf("%s: #%s on %s: was %s, not run this time", c.Kind, c.Suite, c.Build, c.Before)
	}
	if c.Before == "" {
		return fmt.Sprintf("%s: #%s on %s: %s", c.Kind, c.Suite, c.Build, c.After)
	}
	return fmt.Sprintf("%s: #%s on %s: %s -> %s", c.Kind, c.Suite, c.Build, c.Before, c.After)
}

// Compare lists what changed from prev to cur, cell by cell (suite and
// build version): newly reproduced (regressed), newly passing (fixed),
// newly inconclusive, and cells that are new.
func Compare(prev, cur []Result) []Change {
	key := func(r Result) [2]string {
		name := r.Name
		if name == "" {
			name = r.Build
		}
		return [2]string{r.Suite, name}
	}
	before := map[[2]string]verdict.Verdict{}
	for _, r := range prev {
		before[key(r)] = r.Verdict
	}
	var out []Change
	now := map[[2]string]bool{}
	for _, r := range cur {
		now[key(r)] = true
	}
	// A cell the previous run had and this one lacks (a build the mirror
	// stopped serving, a suite removed) is reported, never silently gone.
	for _, r := range prev {
		if k := key(r); !now[k] {
			out = append(out, Change{Kind: "vanished", Suite: k[0], Build: k[1], Before: r.Verdict})
			now[k] = true
		}
	}
	for _, r := range cur {
		k := key(r)
		b, seen := before[k]
		c := Change{Suite: k[0], Build: k[1], Before: b, After: r.Verdict}
		switch {
		case !seen:
			c.Kind = "new"
		case b == r.Verdict:
			continue
		case r.Verdict == verdict.Reproduced:
			c.Kind = "regressed"
		case r.Verdict == verdict.Pass && b == verdict.Reproduced:
			c.Kind = "fixed"
		case r.Verdict == verdict.Inconclusive:
			c.Kind = "newly inconclusive"
		default:
			c.Kind = "changed"
		}
		out = append(out, c)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Kind < out[j].Kind })
	return out
}

// Previous finds the newest run under root other than exclude, by run id.
func Previous(root, exclude string) (Run, bool) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return Run{}, false
	}
	var ids []string
	for _, e := range entries {
		if e.IsDir() && e.Name() != exclude {
			ids = append(ids, e.Name())
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(ids)))
	for _, id := range ids {
		data, err := os.ReadFile(filepath.Join(root, id, "summary.json"))
		if err != nil {
			continue
		}
		var r Run
		if json.Unmarshal(data, &r) == nil {
			return r, true
		}
	}
	return Run{}, false
}

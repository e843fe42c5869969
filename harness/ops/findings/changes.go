package findings

import (
	"fmt"
	"sort"
	"strings"

	"github.com/harp-project/harp/harness/ops/report"
)

// Change is one finding that moved between two runs, build by build.
type Change struct {
	Kind      string   `json:"kind"` // new finding, also on, gone from, not observed on
	ID        string   `json:"id"`
	Signature string   `json:"signature"`
	Builds    []string `json:"builds"`
	Example   string   `json:"example,omitempty"`
}

func (c Change) String() string {
	s := fmt.Sprintf("%s %s %s: %s", c.Kind, c.ID, c.Signature, strings.Join(c.Builds, ", "))
	if c.Example != "" {
		s += " (" + c.Example + ")"
	}
	return s
}

// sightings: per signature, per build, whether it showed (true) or was
// looked for and absent (false); a build that shows it once shows it.
func sightings(rs []report.Result) (map[string]map[string]bool, map[string]string) {
	out := map[string]map[string]bool{}
	example := map[string]string{}
	for _, r := range rs {
		for _, o := range Of(r) {
			if out[o.Signature] == nil {
				out[o.Signature] = map[string]bool{}
			}
			b := buildName(r)
			out[o.Signature][b] = out[o.Signature][b] || o.Shows
			if o.Shows && example[o.Signature] == "" {
				example[o.Signature] = o.Example
			}
		}
		// A crash is absent where its suite ran with every node watched.
	}
	for sig, builds := range out {
		if !strings.HasPrefix(sig, "crash/") {
			continue
		}
		for _, r := range rs {
			w := r.CrashWatch
			if r.IsCrashRow() || w == nil || len(w.Failed) > 0 || w.Nodes == 0 {
				continue
			}
			if _, ok := builds[buildName(r)]; !ok && SuiteOfCrash(rs, sig)[r.Suite] {
				builds[buildName(r)] = false
			}
		}
	}
	return out, example
}

// SuiteOfCrash lists the suites that met a crash in rs.
func SuiteOfCrash(rs []report.Result, sig string) map[string]bool {
	out := map[string]bool{}
	for _, r := range rs {
		if metCrash(r, sig) {
			out[r.Suite] = true
		}
	}
	return out
}

// Changes lists the findings that moved from prev to cur: new ones (shown
// now, on no build before), ones now also on another build, ones gone
// from a build (looked for there and absent), and ones a build showed
// before that this run could not look for (INCONCLUSIVE, not run): never
// silently gone.
func Changes(prev, cur []report.Result) []Change {
	before, _ := sightings(prev)
	now, example := sightings(cur)
	// A check last seen under the suite it was split from is the same
	// finding now (report.SplitFrom): neither new nor gone.
	for sig := range now {
		suite := SuiteOf(sig)
		former := report.SplitFrom[suite] + "/" + strings.TrimPrefix(sig, suite+"/")
		if was, ok := before[former]; ok && report.SplitFrom[suite] != "" {
			before[sig] = was
			delete(before, former)
		}
	}
	var out []Change
	add := func(kind, sig string, builds []string, ex string) {
		if len(builds) == 0 {
			return
		}
		sort.Strings(builds)
		out = append(out, Change{Kind: kind, ID: ID(sig), Signature: sig, Builds: builds, Example: ex})
	}
	for sig, builds := range now {
		var shown, spread []string
		everBefore := false
		for _, s := range before[sig] {
			everBefore = everBefore || s
		}
		for b, s := range builds {
			if !s {
				continue
			}
			shown = append(shown, b)
			if !before[sig][b] {
				spread = append(spread, b)
			}
		}
		if !everBefore {
			add("new finding", sig, shown, example[sig])
		} else {
			add("also on", sig, spread, example[sig])
		}
	}
	for sig, builds := range before {
		var gone, unseen []string
		for b, s := range builds {
			if !s {
				continue
			}
			switch s2, looked := now[sig][b]; {
			case looked && !s2:
				gone = append(gone, b)
			case !looked:
				unseen = append(unseen, b)
			}
		}
		add("gone from", sig, gone, "")
		add("not observed on", sig, unseen, "")
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Kind != out[j].Kind {
			return out[i].Kind < out[j].Kind
		}
		return out[i].Signature < out[j].Signature
	})
	return out
}

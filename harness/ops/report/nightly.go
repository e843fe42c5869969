package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/harp-project/harp/harness/core/verdict"
)

// Change is one cell whose verdict moved since the previous run.
type Change struct {
	Kind   string          `json:"kind"` // regressed, fixed, newly inconclusive, new, ...
	Suite  string          `json:"suite"`
	Build  string          `json:"build"`
	Before verdict.Verdict `json:"before,omitempty"`
	After  verdict.Verdict `json:"after,omitempty"`
	// A git head's commits on either side, and what the bisect between
	// them found (FirstBad: "commit subject", or the range left).
	BeforeCommit string `json:"before_commit,omitempty"`
	AfterCommit  string `json:"after_commit,omitempty"`
	FirstBad     string `json:"first_bad,omitempty"`
}

func (c Change) String() string {
	s := c.line()
	if c.BeforeCommit != "" && c.AfterCommit != "" && c.BeforeCommit != c.AfterCommit {
		s += fmt.Sprintf(" (commit %s -> %s)", short(c.BeforeCommit), short(c.AfterCommit))
	}
	if c.FirstBad != "" {
		s += "; " + c.FirstBad
	}
	return s
}

func short(id string) string { return id[:min(12, len(id))] }

func (c Change) line() string {
	if c.After == "" {
		return fmt.Sprintf("%s: #%s on %s: was %s, not run this time", c.Kind, c.Suite, c.Build, c.Before)
	}
	if c.Before == "" {
		return fmt.Sprintf("%s: #%s on %s: %s", c.Kind, c.Suite, c.Build, c.After)
	}
	return fmt.Sprintf("%s: #%s on %s: %s -> %s", c.Kind, c.Suite, c.Build, c.Before, c.After)
}

// NightlyVerdict is a nightly's verdict: its cells', made INCONCLUSIVE
// by a cell gone since the previous night (a build the mirror stopped
// serving, a suite removed): a night that tested less is never green.
func NightlyVerdict(cells verdict.Verdict, changes []Change) verdict.Verdict {
	for _, c := range changes {
		if c.Kind == "vanished" {
			cells = verdict.Worst(cells, verdict.Inconclusive)
		}
	}
	return cells
}

// Compare lists what changed from prev to cur, cell by cell (suite and
// build version; for a git: build, its spec, so a branch head is the same
// cell whatever commit it is at tonight): newly reproduced (regressed),
// newly passing (fixed), newly inconclusive, and cells that are new.
func Compare(prev, cur []Result) []Change {
	key := func(r Result) [2]string {
		name := r.Name
		if name == "" || strings.HasPrefix(r.Build, "git:") {
			name = r.Build
		}
		return [2]string{r.Suite, name}
	}
	before := map[[2]string]verdict.Verdict{}
	commits := map[[2]string]string{}
	for _, r := range prev {
		before[key(r)] = r.Verdict
		commits[key(r)] = r.Commit
	}
	var out []Change
	now := map[[2]string]bool{}
	for _, r := range cur {
		now[key(r)] = true
	}
	// A cell the previous run had and this one lacks (a build the mirror
	// stopped serving, a suite removed) is reported, never silently gone.
	// A suite split in parts (SplitFrom) ran where any of its parts did.
	for _, r := range cur {
		if former := SplitFrom[r.Suite]; former != "" {
			now[[2]string{former, key(r)[1]}] = true
		}
	}
	for _, r := range prev {
		if k := key(r); !now[k] {
			out = append(out, Change{Kind: "vanished", Suite: k[0], Build: k[1], Before: r.Verdict})
			now[k] = true
		}
	}
	for _, r := range cur {
		k := key(r)
		b, seen := before[k]
		c := Change{Suite: k[0], Build: k[1], Before: b, After: r.Verdict, BeforeCommit: commits[k], AfterCommit: r.Commit}
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

// PrunedNote is the file a run directory gets when its evidence was removed.
const PrunedNote = "EVIDENCE-PRUNED"

// MaxKeep bounds a retention setting: more is a typo, not a policy.
const MaxKeep = 10000

// CheckKeep refuses a retention setting out of 0..MaxKeep.
func CheckKeep(keep int) error {
	if keep < 0 || keep > MaxKeep {
		return fmt.Errorf("--keep %d: want 0 to %d runs whose evidence is kept", keep, MaxKeep)
	}
	return nil
}

// Prune keeps the evidence of the newest keep runs under root (by run id)
// and removes the evidence directories of the older ones; their
// summary.json, reports and junit.xml stay (history and comparisons read
// those), and each gets a PrunedNote saying when, by what and why. It
// gives the runs it pruned now. by names who prunes (the newest run).
func Prune(root string, keep int, by string, now time.Time) ([]string, error) {
	if err := CheckKeep(keep); err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, e := range entries {
		if e.IsDir() { // not reports/latest, a link
			ids = append(ids, e.Name())
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(ids)))
	var pruned []string
	var errs []error
	runs := 0
	for _, id := range ids {
		dir := filepath.Join(root, id)
		data, err := os.ReadFile(filepath.Join(dir, "summary.json"))
		if err != nil {
			continue // not a run (or one still being written)
		}
		var run Run
		if json.Unmarshal(data, &run) != nil {
			continue
		}
		runs++
		if runs <= keep {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, PrunedNote)); err == nil {
			continue // pruned before
		}
		var gone []string
		for _, r := range run.Results {
			ev := r.Evidence
			// Only a directory of the run itself, never a path out of it.
			if ev == "" || ev != filepath.Base(ev) || ev == "." || ev == ".." {
				continue
			}
			if err := os.RemoveAll(filepath.Join(dir, ev)); err != nil {
				errs = append(errs, err)
				continue
			}
			gone = append(gone, ev+"/")
		}
		note := fmt.Sprintf("Evidence removed %s by harp nightly --keep %d (run %s): only the newest %d nightly runs keep their evidence.\n"+
			"summary.json, report.md, report.html and junit.xml stay; their links into these directories no longer resolve:\n%s",
			now.UTC().Format(time.RFC3339), keep, by, keep, strings.Join(append(gone, ""), "\n"))
		if err := os.WriteFile(filepath.Join(dir, PrunedNote), []byte(note), 0o644); err != nil {
			errs = append(errs, err)
			continue
		}
		pruned = append(pruned, id)
	}
	return pruned, errors.Join(errs...)
}

package history

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Bisected is what a bisect of a caught fix's check answered (its
// bisect.json, kept as fixtures/upstream-bugs/bisects/<fix>.json): the
// first bad commit, or the commits it could not tell apart.
type Bisected struct {
	Finding  string   `json:"finding"`
	Good     string   `json:"good"`  // the range's good end
	Bad      string   `json:"bad"`   // and its bad end
	First    string   `json:"first"` // the first bad commit (12 hex), "" when none was named
	Suspects []string `json:"suspects,omitempty"`
	Unmet    string   `json:"unmet,omitempty"`
}

// bisectFile is the part of a bisect.json harp history reads.
type bisectFile struct {
	Finding string `json:"finding"`
	Range   []struct {
		Label  string `json:"label"`
		Commit string `json:"commit"`
	} `json:"range"`
	First *struct {
		Commit string `json:"commit"`
	} `json:"first"`
	Suspects []struct {
		Commit string `json:"commit"`
	} `json:"suspects"`
	Unmet string `json:"unmet"`
}

// ReadBisects reads every <fix>.json of dir (a missing dir is none).
func ReadBisects(dir string) (map[string]Bisected, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	out := map[string]Bisected{}
	for _, n := range names {
		data, err := os.ReadFile(n)
		if err != nil {
			return nil, err
		}
		var f bisectFile
		if err := json.Unmarshal(data, &f); err != nil {
			return nil, fmt.Errorf("%s: %w", n, err)
		}
		fix := strings.TrimSuffix(filepath.Base(n), ".json")
		if len(f.Range) < 2 {
			return nil, fmt.Errorf("%s: a bisect without its range", n)
		}
		b := Bisected{Finding: f.Finding, Good: f.Range[0].Label, Bad: f.Range[len(f.Range)-1].Label, Unmet: f.Unmet}
		if f.First != nil {
			b.First = f.First.Commit[:min(12, len(f.First.Commit))]
		}
		for _, s := range f.Suspects {
			b.Suspects = append(b.Suspects, s.Commit[:min(12, len(s.Commit))])
		}
		out[fix] = b
	}
	return out, nil
}

// ReadRelated reads related.tsv of dir: fix, the commit its message
// names, what that commit is to the bug, and why. "related": it is related
// to the bug rather than its cause (an earlier, incomplete fix; a commit
// that made it reachable). "out of reach": it is the cause, but no build
// before it can be a bisect's good end for the fix's check (the commit
// brought the bug with the very form the check uses, which older builds
// refuse as the bug does). Either way no bisect is owed. A missing file
// is none.
func ReadRelated(dir string) (map[string]string, error) {
	f, err := os.Open(filepath.Join(dir, "related.tsv"))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]string{}
	err = readRows(f, func(n int, id string, fields []string) error {
		if len(fields) != 4 || fields[3] == "" {
			return fmt.Errorf("related.tsv line %d: want fix, named commit, related or out of reach, why", n)
		}
		switch fields[2] {
		case "related":
			out[id] = fmt.Sprintf("`%s` is related, not the cause: %s", fields[1], fields[3])
		case "out of reach":
			out[id] = fmt.Sprintf("`%s` is the cause, out of a bisect's reach: %s", fields[1], fields[3])
		default:
			return fmt.Errorf("related.tsv line %d: %q is neither related nor out of reach", n, fields[2])
		}
		return nil
	})
	return out, err
}

// WithRelated marks the fixes whose named commit is not their bug's cause,
// or is out of a bisect's reach: no bisect is owed for them.
func (b *Board) WithRelated(rel map[string]string) {
	for i := range b.Rows {
		for fix, why := range rel {
			if sameCommit(fix, b.Rows[i].Fix.Commit) {
				b.Rows[i].Related = why
			}
		}
	}
}

// WithBisects puts each fix's bisect on its row, and says whether its
// answer is a commit the fix's message names.
func (b *Board) WithBisects(bs map[string]Bisected) {
	for i := range b.Rows {
		r := &b.Rows[i]
		for fix, bi := range bs {
			if !sameCommit(fix, r.Fix.Commit) {
				continue
			}
			bi := bi
			r.Bisect = &bi
			for _, n := range r.Names {
				if bi.First != "" && sameCommit(n.Commit, bi.First) {
					r.BisectAgrees = true
				}
			}
		}
	}
}

// Bisectable are the caught fixes whose message names a commit after the
// history's first release: a bisect between releases can name it.
func (b Board) Bisectable() []Row {
	var out []Row
	for _, r := range b.Rows {
		if r.Status != Caught || r.Related != "" {
			continue
		}
		for _, n := range r.Names {
			if n.After {
				out = append(out, r)
				break
			}
		}
	}
	return out
}

// bisectCell is the doc's bisect column.
func bisectCell(r Row) string {
	bi := r.Bisect
	switch {
	case r.Related != "":
		return cell(r.Related)
	case bi == nil:
		return "–"
	case bi.First != "" && r.BisectAgrees:
		return fmt.Sprintf("`%s`, a named commit (%s..%s)", bi.First, bi.Good, bi.Bad)
	case bi.First != "":
		return fmt.Sprintf("`%s`, no named commit (%s..%s)", bi.First, bi.Good, bi.Bad)
	case len(bi.Suspects) > 0:
		for _, sus := range bi.Suspects {
			for _, n := range r.Names {
				if sameCommit(sus, n.Commit) {
					return fmt.Sprintf("one of %d commits, the named `%s` among them (%s..%s)", len(bi.Suspects), sus, bi.Good, bi.Bad)
				}
			}
		}
		return fmt.Sprintf("one of %d commits (%s..%s)", len(bi.Suspects), bi.Good, bi.Bad)
	}
	return "no answer: " + cell(bi.Unmet)
}

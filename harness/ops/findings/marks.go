package findings

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/harp-project/harp/harness/ops/report"
)

// StatusFile is the user-kept status of findings, beside the reports: a
// plain JSON file, one entry per signature, to keep in git or edit.
const StatusFile = "findings-status.json"

// States a user can mark a finding with.
const (
	StateNew      = "new" // never marked
	StateReported = "reported"
	StateFixed    = "fixed-in"
	StateHarp     = "not-haproxy" // the harness's own fault: kept, and said so
	StateWontFix  = "wontfix"
)

var states = map[string]*regexp.Regexp{
	StateReported: regexp.MustCompile(`^([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)?#[0-9]+$|^https?://\S+$`),
	StateFixed:    regexp.MustCompile(`^\S+$`), // a version or a commit
	StateHarp:     regexp.MustCompile(`^.*$`),
	StateWontFix:  regexp.MustCompile(`^.*$`),
}

// Status is one finding's mark.
type Status struct {
	State string    `json:"state"`
	Ref   string    `json:"ref,omitempty"` // haproxy/haproxy#N, a version, a note
	At    time.Time `json:"at,omitzero"`
}

// Marks are the statuses by signature.
type Marks map[string]Status

// Of is a signature's status, "new" when unmarked.
func (m Marks) Of(sig string) Status {
	if s, ok := m[sig]; ok {
		return s
	}
	return Status{State: StateNew}
}

// CheckMark checks a mark a user typed: a known state, and the reference
// it needs (reported: owner/repo#N or a URL; fixed-in: a version).
func CheckMark(state, ref string) error {
	re, ok := states[state]
	if !ok {
		var known []string
		for s := range states {
			known = append(known, s)
		}
		sort.Strings(known)
		return fmt.Errorf("unknown status %q: want one of %s", state, strings.Join(known, ", "))
	}
	if (state == StateReported || state == StateFixed) && ref == "" {
		return fmt.Errorf("status %s needs what it refers to (reported haproxy/haproxy#N, fixed-in v3.4.2)", state)
	}
	if !re.MatchString(ref) {
		return fmt.Errorf("status %s: %q is not a reference it takes (reported: owner/repo#N or a URL; fixed-in: a version or commit)", state, ref)
	}
	return nil
}

// LoadMarks reads root's status file; none is no marks.
func LoadMarks(root string) (Marks, error) {
	m := Marks{}
	b, err := os.ReadFile(filepath.Join(root, StatusFile))
	if errors.Is(err, fs.ErrNotExist) {
		return m, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(root, StatusFile), err)
	}
	return m, nil
}

// SaveMarks writes the status file whole (through a temporary file, so an
// interrupted write leaves the old one).
func SaveMarks(root string, m Marks) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(root, "."+StatusFile+".tmp")
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(root, StatusFile))
}

// Scan finds every run under root (a reports directory, a nightly tree,
// merged shards): each directory holding a summary.json, links not
// followed (reports/latest is one of the runs). A summary that cannot be
// read is an error naming it: a ledger that silently skipped a run would
// say a finding was absent where nobody looked.
func Scan(root string) ([]Scanned, error) {
	st, err := os.Stat(root)
	if err != nil {
		return nil, fmt.Errorf("reports: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("reports: %s is not a directory", root)
	}
	var out []Scanned
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || d.Name() != "summary.json" {
			return nil
		}
		dir := filepath.Dir(p)
		run, err := report.LoadSummary(dir)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, dir)
		out = append(out, Scanned{Dir: rel, Run: run})
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("reports: %s holds no harp run (no summary.json under it)", root)
	}
	return out, nil
}

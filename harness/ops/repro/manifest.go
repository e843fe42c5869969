package repro

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// ManifestName is the file in a reproducer's directory that says whose
// reproducer it is and what harp's check of it said.
const ManifestName = "repro.json"

// Manifest is repro.json: what harp report needs to refuse another
// finding's reproducer and to say when one was never verified.
type Manifest struct {
	Finding   string `json:"finding"` // the finding's id
	Signature string `json:"signature"`
	Lang      string `json:"lang"`
	From      Source `json:"from"`
	// Verification is harp's check of the script, its runs left out
	// (verified.txt holds them whole).
	Verification Verification `json:"verification"`
}

func (r Repro) manifest(v Verification) Manifest {
	v.Runs = nil
	return Manifest{Finding: r.Finding.ID, Signature: r.Finding.Signature, Lang: r.Lang, From: r.From, Verification: v}
}

// readmeTitle is README.md's first line (README), naming the finding.
var readmeTitle = regexp.MustCompile(`^# Reproducer of (\S+): (.+)\n`)

// ReadManifest reads a reproducer directory's repro.json; one written
// before repro.json existed is read from its README.md (its title names
// the finding, its first paragraph the verification).
func ReadManifest(dir string) (Manifest, error) {
	var m Manifest
	b, err := os.ReadFile(filepath.Join(dir, ManifestName))
	switch {
	case err == nil:
		if err := json.Unmarshal(b, &m); err != nil {
			return m, fmt.Errorf("%s: %w", filepath.Join(dir, ManifestName), err)
		}
		if m.Signature == "" && m.Finding == "" {
			return m, fmt.Errorf("%s names no finding", filepath.Join(dir, ManifestName))
		}
		return m, nil
	case !errors.Is(err, fs.ErrNotExist):
		return m, err
	}
	readme, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if errors.Is(err, fs.ErrNotExist) {
		return m, fmt.Errorf("%s has neither %s nor README.md: it names no finding (harp findings repro --out writes both)", dir, ManifestName)
	}
	if err != nil {
		return m, err
	}
	t := readmeTitle.FindStringSubmatch(string(readme))
	if t == nil {
		return m, fmt.Errorf("%s has no %s, and its README.md does not start with \"# Reproducer of <finding>: <signature>\": it names no finding", dir, ManifestName)
	}
	m.Finding, m.Signature = t[1], t[2]
	// The paragraph after the title says how harp checked it (README).
	para, _, _ := strings.Cut(strings.TrimPrefix(string(readme), t[0]), "\n\n")
	para = strings.TrimSpace(para)
	switch {
	case strings.HasPrefix(para, "**Verified**"):
		m.Verification.State = Verified
	case strings.HasPrefix(para, "**Not verified**"):
		m.Verification.State = Skipped
	default:
		m.Verification.State = Unverified
		if why, ok := strings.CutPrefix(para, "**UNVERIFIED**: harp's check of this script failed: "); ok {
			m.Verification.Why, _, _ = strings.Cut(why, ". Do not rely on its verdict")
		}
	}
	return m, nil
}

// Package history is upstream's bug history as harp's scoreboard: every
// BUG/ fix to the code harp tests (peers, stick tables, master-worker, the
// CLI, listeners, reload paths), the release it came in and the release
// before it, a judgement of whether a black-box harness can see the bug,
// the finding meant to catch it, and harp's verdicts on both releases read
// from a run's summaries. Collect reads a clone; the rest are pure.
package history

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Fix is one upstream BUG/ commit.
type Fix struct {
	Commit   string   `json:"commit"`
	Subject  string   `json:"subject"`
	Severity string   `json:"severity"`  // MINOR, MEDIUM, MAJOR, CRITICAL
	Files    []string `json:"files"`     // of the tracked files, those it touches
	FirstTag string   `json:"first_tag"` // the nearest tag holding it (a dev tag, usually)
	// Fixed is the first .0 release holding it, Bad the .0 release before
	// that ("" when the fix is older than every release looked at or newer
	// than the last).
	Fixed string `json:"fixed_release,omitempty"`
	Bad   string `json:"bad_release,omitempty"`
	// Parent is the fix's first parent: with the fix itself, the pair of
	// builds that shows a bug no release had (one a dev cycle brought and
	// fixed), or one the releases between cannot tell apart.
	Parent string `json:"parent,omitempty"`
	// Names are the commits the fix's message names (usually the one that
	// brought the bug, sometimes only a related one): where a bisect from
	// the last release without them must land.
	Names []Named `json:"names,omitempty"`
}

// Named is a commit a fix's message names.
type Named struct {
	Commit string `json:"commit"` // 12 characters
	Tag    string `json:"tag"`    // the nearest tag holding it
	// After: it is after the history's first release (a bisect between
	// releases harp builds can find it).
	After bool `json:"after"`
}

// Short is the 12-character id upstream's messages use.
func (f Fix) Short() string { return f.Commit[:min(12, len(f.Commit))] }

// Judgement is what a person decided about one fix: whether harp can see
// the bug from outside, why, and the finding signature meant to catch it
// (a suite, a suite's check, or "-" for none yet).
type Judgement struct {
	Commit     string `json:"-"`
	Observable bool   `json:"observable"`
	Why        string `json:"why"`
	Catch      string `json:"catch"`
	Introduced string `json:"introduced,omitempty"`
	Repro      string `json:"repro,omitempty"`
	// Technique: judged again (WithTechniques): what makes it observable
	// ("proc", "exec+proc"), or "none" where no technique would do.
	Technique string `json:"technique,omitempty"`
}

// Caught says whether the judgement names a finding harp checks; a
// proposal ("new:..."), a retired check ("retired:...") or "-" is none.
func (j Judgement) Caught() bool {
	return j.Catch != "" && j.Catch != "-" && !strings.HasPrefix(j.Catch, "new:") && !j.Retired()
}

// SuiteOnly says whether the catch names suites alone, no check of any:
// "conf-runtime-limits", not "upstream-fixes-cli/cli-empty-line-ignored".
func (j Judgement) SuiteOnly() bool {
	if !j.Caught() {
		return false
	}
	for _, sig := range strings.Split(j.Catch, ",") {
		if strings.Contains(strings.TrimSpace(sig), "/") {
			return false
		}
	}
	return true
}

// introducedDev is a development tag in where a bug came in:
// "commit 594408cd612b (v3.4-dev1)".
var introducedDev = regexp.MustCompile(`\bv(\d+)\.(\d+)-dev\d+`)

// CameAfter says whether the judgement names a development tag of a later
// version than the release bad as where the bug came in: that release
// never had the bug, so its cell says nothing of this fix (a violation
// there is another bug's), and only the fix's parent and the fix decide.
func (j Judgement) CameAfter(bad string) bool {
	m := introducedDev.FindStringSubmatch(j.Introduced)
	a, b, ok := releaseKey(bad)
	if m == nil || !ok {
		return false
	}
	ma, _ := strconv.Atoi(m[1])
	mb, _ := strconv.Atoi(m[2])
	return ma > a || (ma == a && mb > b)
}

// Retired says whether the fix had a check that was wired, run, and
// retired because it could not catch the bug ("retired:<check> (why)"):
// a miss, never a fix without a check.
func (j Judgement) Retired() bool { return strings.HasPrefix(j.Catch, "retired:") }

// severity is the level a BUG/ subject names.
var severity = regexp.MustCompile(`^BUG/(MINOR|MEDIUM|MAJOR|CRITICAL)\b`)

// Severity of a subject, "" when it is no BUG/ commit.
func Severity(subject string) string {
	m := severity.FindStringSubmatch(subject)
	if m == nil {
		if strings.HasPrefix(subject, "BUG/") {
			return "UNKNOWN"
		}
		return ""
	}
	return m[1]
}

// ReadJudgements reads the judgements file: one fix per line, tab
// separated (commit, yes|no, why, catch, introduced, repro); # starts a
// comment. A malformed line is an error naming it: a judgement silently
// lost would count its fix as unjudged.
func ReadJudgements(r io.Reader) (map[string]Judgement, error) {
	out := map[string]Judgement{}
	err := readRows(r, func(n int, id string, f []string) error {
		if len(f) < 4 {
			return fmt.Errorf("line %d: %d fields, want commit, observable, why, catch[, introduced, repro]", n, len(f))
		}
		var obs bool
		switch strings.TrimSpace(f[1]) {
		case "yes":
			obs = true
		case "no":
		default:
			return fmt.Errorf("line %d: observable is %q, want yes or no", n, f[1])
		}
		j := Judgement{Commit: id, Observable: obs, Why: strings.TrimSpace(f[2]), Catch: strings.TrimSpace(f[3])}
		if len(f) > 4 {
			j.Introduced = strings.TrimSpace(f[4])
		}
		if len(f) > 5 {
			j.Repro = strings.TrimSpace(f[len(f)-1])
		}
		if _, dup := out[id]; dup {
			return fmt.Errorf("line %d: %s judged twice", n, id)
		}
		out[id] = j
		return nil
	})
	return out, err
}

// readRows reads a tab-separated file of fixes: blank lines and lines
// starting with # skipped, each row given with its line number, its
// first field as a lower-case commit id (checked) and all its fields. An
// error names the line.
func readRows(r io.Reader, row func(n int, id string, fields []string) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		id := strings.ToLower(strings.TrimSpace(f[0]))
		if len(id) < 7 || strings.Trim(id, "0123456789abcdef") != "" {
			return fmt.Errorf("line %d: %q is no commit id", n, f[0])
		}
		if err := row(n, id, f); err != nil {
			return err
		}
	}
	return sc.Err()
}

// judgementOf finds the judgement of a fix by any prefix of its id.
func judgementOf(js map[string]Judgement, commit string) (Judgement, bool) {
	for n := len(commit); n >= 7; n-- {
		if j, ok := js[commit[:n]]; ok {
			return j, true
		}
	}
	return Judgement{}, false
}

// Release is a .0 tag's version key: v3.10.0 after v3.9.0.
func releaseKey(tag string) (int, int, bool) {
	m := releaseZero.FindStringSubmatch(tag)
	if m == nil {
		return 0, 0, false
	}
	a, _ := strconv.Atoi(m[1])
	b, _ := strconv.Atoi(m[2])
	return a, b, true
}

var releaseZero = regexp.MustCompile(`^v(\d+)\.(\d+)\.0$`)

// SortReleases orders .0 tags by version and drops the others.
func SortReleases(tags []string) []string {
	var out []string
	for _, t := range tags {
		if _, _, ok := releaseKey(t); ok {
			out = append(out, t)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a1, b1, _ := releaseKey(out[i])
		a2, b2, _ := releaseKey(out[j])
		return a1 < a2 || a1 == a2 && b1 < b2
	})
	return out
}

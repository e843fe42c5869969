package fixcase

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/harp-project/harp/harness/verdict"
)

// Judged is a case and the judge of its answer (and of the answer to its
// Then, after ThenMark).
type Judged struct {
	Case
	Want func(answer string) (ok bool, why string)
}

// GoWants judge the cases whose file says `want go`, by case ID: answers
// that need parsing, or a why that quotes what was counted.
type GoWants map[string]func(answer string) (ok bool, why string)

// LoadJudged reads dir's cases (Load) and gives each its judge: its file's
// rule, or goWants' function where the file says `want go`. A case of
// `want go` without a Go judge, or a Go judge of no such case, is an error:
// either would leave a case judged by nothing.
func LoadJudged(fsys fs.FS, dir string, goWants GoWants) ([]Judged, error) {
	cs, err := Load(fsys, dir)
	if err != nil {
		return nil, err
	}
	var out []Judged
	ids := map[string]bool{}
	for _, c := range cs {
		ids[c.ID] = true
		want, ok := c.Rule.Eval, true
		if c.Rule.Go {
			want, ok = goWants[c.ID]
		}
		if !ok {
			return nil, fmt.Errorf("%s: the file says want go, and no Go judge has the case", c.ID)
		}
		out = append(out, Judged{c, want})
	}
	for id := range goWants {
		if !ids[id] {
			return nil, fmt.Errorf("a Go judge of %s, which %s has no file of", id, dir)
		}
	}
	return out, nil
}

// MustLoadJudged is LoadJudged of embedded files, which a test proves.
func MustLoadJudged(fsys fs.FS, dir string, goWants GoWants) []Judged {
	cs, err := LoadJudged(fsys, dir, goWants)
	if err != nil {
		panic(err)
	}
	return cs
}

// Facts are what one case observed.
type Facts struct {
	Case string `json:"case"`
	Fix  string `json:"fix"`
	// Skip: the build predates what the case uses, or lacks what it removed.
	Skip string `json:"not_applicable,omitempty"`
	// HarpErr: harp could not run the case (no HAProxy answer is judged).
	HarpErr string `json:"harp_error,omitempty"`
	Answer  string `json:"answer"`
	// Died: the worker answered no show info after the case, and the
	// master logged a worker's exit since the case began.
	Died bool `json:"worker_died,omitempty"`
}

// Judge decides one case from its facts: its check, a violation when the
// check failed, an unmet precondition when harp could not run it. A death
// fails the case whatever it expected.
func Judge(cases []Judged, f Facts) (cs verdict.Checks, violation, unmet string) {
	i := slices.IndexFunc(cases, func(c Judged) bool { return c.ID == f.Case })
	if i < 0 {
		return nil, "", "no case " + f.Case
	}
	c := cases[i]
	switch {
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

// JudgeCaptured judges the facts a file recorded (a JSON list of Facts,
// one per case, captured from a real build) that name one of cases, and
// gives the IDs of those that failed, sorted. A case harp could not run
// there is an error: a capture must decide every case it holds.
func JudgeCaptured(path string, cases []Judged) (failed []string, err error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var fs []Facts
	if err := json.Unmarshal(data, &fs); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for _, f := range fs {
		if !slices.ContainsFunc(cases, func(c Judged) bool { return c.ID == f.Case }) {
			continue
		}
		cs, violation, unmet := Judge(cases, f)
		switch {
		case unmet != "":
			return nil, fmt.Errorf("%s: %s unmet: %s", path, f.Case, unmet)
		case (violation != "") != (len(cs.Failed()) > 0):
			return nil, fmt.Errorf("%s: %s: violation %q but checks %+v", path, f.Case, violation, cs)
		case violation != "":
			failed = append(failed, f.Case)
		}
	}
	sort.Strings(failed)
	return failed, nil
}

// Then is the answer to a case's Then, after ThenMark ("" when none).
func Then(answer string) string {
	_, after, _ := strings.Cut(answer, ThenMark)
	return after
}

// Arrow reads "<label> N -> M" from a steps case's answer: a count
// before and after the case's trigger.
func Arrow(answer, label string) (before, after int, ok bool) {
	m := regexp.MustCompile(regexp.QuoteMeta(label) + ` (\d+) -> (\d+)`).FindStringSubmatch(answer)
	if m == nil {
		return 0, 0, false
	}
	before, _ = strconv.Atoi(m[1])
	after, _ = strconv.Atoi(m[2])
	return before, after, true
}

// DiffCaptured judges every capture file of dir (facts-<tag>.json, named
// in want) with JudgeCaptured: an error names each file whose failed cases
// are not the ones want gives it.
func DiffCaptured(dir string, cases []Judged, want map[string][]string) error {
	var errs []string
	for file, w := range want {
		failed, err := JudgeCaptured(path.Join(dir, file), cases)
		switch {
		case err != nil:
			errs = append(errs, err.Error())
		case !slices.Equal(failed, w):
			errs = append(errs, fmt.Sprintf("%s: failed %v, want %v", file, failed, w))
		}
	}
	sort.Strings(errs)
	if errs != nil {
		return errors.New(strings.Join(errs, "\n"))
	}
	return nil
}

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

	"github.com/harp-project/harp/harness/core/cliout"
	"github.com/harp-project/harp/harness/core/obs"
	"github.com/harp-project/harp/harness/core/verdict"
)

// Want judges HAProxy's answer to a case (and the answer to its Then,
// after ThenMark): whether it is what the fix made it, and why not. An
// error says the answer decides nothing (harp cannot read it: output that
// does not parse, a count the drive did not give): unknown, never a
// violation.
type Want func(answer string) (ok bool, why string, err error)

// Judged is a case and the judge of its answer.
type Judged struct {
	Case
	Want Want
}

// GoWants judge the cases whose file says `want go`, by case ID: answers
// that need parsing, or a why that quotes what was counted.
type GoWants map[string]Want

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
		want, ok := Want(c.Rule.Eval), true
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

// Facts are what one case observed. The answer is an observation:
// HAProxy's whole answer, or harp's failure to get it (a dial, a write, a
// deadline, an answer cut by one, a silence nothing proved HAProxy's),
// which is unknown and decides nothing (verdict.MarkUnknown reaches it as
// it reaches every suite's facts).
type Facts struct {
	Case string `json:"case"`
	Fix  string `json:"fix"`
	// Skip: the build predates what the case uses, lacks what it removed,
	// or lacks a capability it needs: not applicable, never held.
	Skip   string         `json:"not_applicable,omitempty"`
	Answer obs.Of[string] `json:"answer"`
	// Died: the worker answered no show info after the case, and the
	// master logged a worker's exit since the case began: HAProxy's
	// answer by dying, which explains an answer harp could not finish.
	Died obs.Optional[obs.Exit] `json:"worker_died,omitempty"`
}

// UnmarshalJSON also reads facts recorded before answers were
// observations (the captures of the release tags): an answer string was
// HAProxy's, a harp_error harp's failure, worker_died true a death.
func (f *Facts) UnmarshalJSON(data []byte) error {
	type plain Facts
	var raw struct {
		plain
		Answer  json.RawMessage `json:"answer"`
		Died    json.RawMessage `json:"worker_died"`
		HarpErr string          `json:"harp_error"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	*f = Facts(raw.plain)
	var s string
	switch {
	case raw.HarpErr != "":
		f.Answer = obs.Failure[string]("%s", raw.HarpErr)
	case len(raw.Answer) > 0 && raw.Answer[0] == '"':
		if err := json.Unmarshal(raw.Answer, &s); err != nil {
			return err
		}
		f.Answer = obs.Value(s)
	case len(raw.Answer) > 0 && string(raw.Answer) != "null":
		if err := json.Unmarshal(raw.Answer, &f.Answer); err != nil {
			return err
		}
	}
	switch d := string(raw.Died); {
	case d == "true":
		f.Died = obs.Opt(obs.Value(obs.Exit{Process: "worker"}))
	case d != "" && d != "null" && d != "false":
		if err := json.Unmarshal(raw.Died, &f.Died.Of); err != nil {
			return err
		}
	}
	return nil
}

// Dead says whether the worker was seen dying on the case.
func (f Facts) Dead() bool {
	e, ok := f.Died.Get()
	return ok && e.Process != ""
}

// NotApplicable says why the case does not apply to a build ("" when
// it does), from the build's version and its `haproxy -vv`: too old for
// what it uses, too new for what it removed, or lacking a capability it
// needs. A build whose -vv harp cannot read lacks every capability: the
// case is not applicable there, never held and never failed.
func (c Case) NotApplicable(version, vv string) string {
	if cliout.Older(version, c.Since) {
		return fmt.Sprintf("%s needs HAProxy %s", c.ID, c.Since)
	}
	if c.Until != "" && !cliout.Older(version, c.Until) {
		return fmt.Sprintf("%s uses what HAProxy %s removed", c.ID, c.Until)
	}
	if len(c.Needs) == 0 {
		return ""
	}
	b, err := cliout.ParseBuild(vv)
	if err != nil {
		return fmt.Sprintf("%s needs %s, and the build's %v", c.ID, strings.Join(c.Needs, ", "), err)
	}
	for _, need := range c.Needs {
		if ok, why := b.Has(need); !ok {
			return fmt.Sprintf("%s needs %s: %s", c.ID, cliout.Capabilities[need], why)
		}
	}
	return ""
}

// Judge decides one case from its facts: its check, a violation when the
// check failed, an unmet precondition when harp could not observe it (or
// cannot read what it observed). A death fails the case whatever it
// expected. A case not applicable to the build is none of these.
func Judge(cases []Judged, f Facts) (cs verdict.Checks, violation, unmet string) {
	i := slices.IndexFunc(cases, func(c Judged) bool { return c.ID == f.Case })
	if i < 0 {
		return nil, "", "no case " + f.Case
	}
	c := cases[i]
	switch {
	case f.Skip != "":
		return nil, "", ""
	case f.Dead():
		e, _ := f.Died.Get()
		text := fmt.Sprintf("%s (upstream %s): the %s died on %s", c.ID, c.Fix, e.Process, c.Does)
		cs.Fail(c.ID, text)
		return cs, text, ""
	case !f.Answer.Known():
		return nil, "", f.Case + ": " + f.Answer.Unknown()
	case f.Answer.State == obs.Refused:
		return nil, "", f.Case + ": refused: " + f.Answer.Why
	}
	ok, why, err := c.Want(f.Answer.Value)
	switch {
	case err != nil:
		return nil, "", f.Case + ": HAProxy's answer decides nothing: " + err.Error()
	case !ok:
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
	fs, err := readCaptured(path)
	if err != nil {
		return nil, err
	}
	return judgeCaptured(path, fs, cases)
}

// readCaptured is a captures file's facts.
func readCaptured(path string) ([]Facts, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var fs []Facts
	if err := json.Unmarshal(data, &fs); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return fs, nil
}

// judgeCaptured is JudgeCaptured on facts read from path.
func judgeCaptured(path string, fs []Facts, cases []Judged) (failed []string, err error) {
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
// are not the ones want gives it, and each case no file holds facts of (a
// new case without captures is not judged on real output: an error).
func DiffCaptured(dir string, cases []Judged, want map[string][]string) error {
	var errs []string
	captured := map[string]bool{}
	for file, w := range want {
		fs, err := readCaptured(path.Join(dir, file))
		if err != nil {
			return err
		}
		for _, f := range fs {
			captured[f.Case] = true
		}
		failed, err := judgeCaptured(path.Join(dir, file), fs, cases)
		switch {
		case err != nil:
			errs = append(errs, err.Error())
		case !slices.Equal(failed, w):
			errs = append(errs, fmt.Sprintf("%s: failed %v, want %v", file, failed, w))
		}
	}
	for _, c := range cases {
		if !captured[c.ID] {
			errs = append(errs, fmt.Sprintf("%s has no captured facts in %s: run its suite on the release tags, then `harp capture --facts <run>`", c.ID, dir))
		}
	}
	sort.Strings(errs)
	if errs != nil {
		return errors.New(strings.Join(errs, "\n"))
	}
	return nil
}

// Answer is one case's answer on one build (a commit build, whose run is
// kept under fixtures/upstream-bugs/runs) and whether the case held.
type Answer struct {
	ID, Build, Text string
	Held            bool
}

// DiffAnswers judges each answer with its case: an error names each one
// judged otherwise than its Held, unreadable, or of no case.
func DiffAnswers(cases []Judged, answers []Answer) error {
	var errs []string
	for _, a := range answers {
		i := slices.IndexFunc(cases, func(c Judged) bool { return c.ID == a.ID })
		if i < 0 {
			errs = append(errs, "no case "+a.ID)
			continue
		}
		if held, why, err := cases[i].Want(a.Text); err != nil || held != a.Held {
			errs = append(errs, fmt.Sprintf("%s on %s: held %v (%s, %v), want %v", a.ID, a.Build, held, why, err, a.Held))
		}
	}
	if errs != nil {
		return errors.New(strings.Join(errs, "\n"))
	}
	return nil
}

// Package suite is the registry of harp's suites: plain values (an id,
// labels, steps, parameters, the reg-tests a suite writes) found by ginkgo
// label filters, and what `harp suites` lists. It is core: no Docker, no
// socket. The environment a run gets and the trial loop are
// harness/live/suiteenv's.
package suite

import (
	"fmt"
	"runtime"
	"slices"
	"sort"
	"strings"

	"github.com/onsi/ginkgo/v2/types"
)

// Suite is one suite: an upstream issue, or a property every build must
// keep.
type Suite struct {
	ID       string // stable id: make test-<ID>, label suite:<ID> (and issue:<ID> for an upstream issue)
	Upstream string // upstream issue reference, or the property's name
	Title    string // upstream issue title
	Summary  string // one line: what the suite checks (README's table)
	// Labels select the suite (area:peers, slow); suite:<ID> (and issue:<ID>) is added by
	// Register.
	Labels []string
	Trials int    // default number of trials
	Noun   string // what trials are called in verdicts, plural: "reloads"
	// Cases: the suite is made of that many cases, one trial each (its
	// Trials): asked for N trials, it runs every case N times (TrialsFor),
	// never the first N cases.
	Cases  int
	Params []Param
	// Steps describe setup, trigger and expectation, for reports; StepsFor,
	// when set, builds them from the run's parameters instead.
	Steps    []string
	StepsFor func(p Values) []string
	// WhenUnmet says which unmet preconditions last (stop the run, no
	// bisect retry: verdict.Trial.Lasting) and which observations the suite
	// still trusts without them (verdict.Trial.Weak); "" for neither.
	WhenUnmet string
	// Run is the suite's run: a suiteenv.RunFunc, func(ctx, *suiteenv.Env)
	// verdict.Outcome, which the registry keeps without knowing its type
	// (suiteenv.Run calls it): the registry stays pure, no Docker in it.
	Run any
	// RegTests writes the suite's checks that VTest can express as
	// reg-tests in HAProxy's own form (harp reg-tests export), and says
	// why each of the others cannot be; NoRegTest says why none of the
	// suite's can. A suite with neither is not looked at.
	RegTests  func() ([]RegTest, []NoRegTest, error)
	NoRegTest string

	pkg string // the registering package's import path (Register)
}

// RegTest is one check of a suite as a .vtc file.
type RegTest struct {
	// Check names the harp checks the test stands for, as `harp reg-tests
	// run --compare` reads them: suite/id, or suite/{a,b}.variant for
	// several (the test fails where any of them does).
	Check string
	Kind  string // what it does, in the reg-tests manifest's words (failed-reload)
	File  string // under reg-tests/: <dir>/<name>.vtc
	Text  string
}

// NoRegTest is a check not written as a reg-test, and why.
type NoRegTest struct{ Check, Kind, Reason string }

// StepsWith gives the steps for a run with these parameters.
func (s *Suite) StepsWith(p Values) []string {
	if s.StepsFor != nil {
		return s.StepsFor(p)
	}
	return s.Steps
}

// TrialsFor is how many trials a run makes when asked for `asked` (0:
// the suite's own): for a suite of cases, `asked` rounds of every case.
func (s *Suite) TrialsFor(asked int) int {
	switch {
	case asked <= 0:
		return s.Trials
	case s.Cases > 0:
		return asked * s.Cases
	}
	return asked
}

// TrialsText says what TrialsFor(asked) runs, for a progress line.
func (s *Suite) TrialsText(asked int) string {
	n := s.TrialsFor(asked)
	if s.Cases > 0 && asked > 1 {
		return fmt.Sprintf("%d %s (%d rounds of %d)", n, s.Noun, asked, s.Cases)
	}
	return fmt.Sprintf("%d %s", n, s.Noun)
}

// Defaults are the suite's parameters with no value given.
func (s *Suite) Defaults() Values {
	v, _ := ValuesFor(s.Params, nil)
	return v
}

// Name is how progress lines call the suite: #3517, cluster-partition.
func (s *Suite) Name() string {
	if strings.Trim(s.ID, "0123456789") == "" {
		return "#" + s.ID
	}
	return s.ID
}

var registry = map[string]*Suite{}

// Register adds a suite; ids must be unique, and what the runner needs
// must be there.
func Register(s *Suite) *Suite {
	switch {
	case s.ID == "" || s.Title == "" || s.Run == nil || s.Noun == "" || s.Trials < 1:
		panic("suite: suite " + s.ID + " needs an ID, a Title, a Noun, Trials and Run")
	case registry[s.ID] != nil:
		panic("suite: duplicate id " + s.ID)
	}
	// suite:<id> selects every suite; issue:<id> is kept for the suites
	// that encode an upstream issue (make test-3517 finds either).
	labels := []string{"suite:" + s.ID}
	if IsUpstreamIssue(s) {
		labels = append(labels, "issue:"+s.ID)
	}
	for _, l := range s.Labels {
		if !slices.Contains(labels, l) {
			labels = append(labels, l)
		}
	}
	s.Labels = labels
	// The package that registers it: its directory follows from its id
	// (suites/all's test), and harp suites can say where it lives.
	if pc, _, _, ok := runtime.Caller(1); ok {
		fn := runtime.FuncForPC(pc).Name() // <path>/suites/<dir>.init or .<var>
		if i := strings.LastIndex(fn, "/"); i >= 0 {
			if j := strings.Index(fn[i:], "."); j >= 0 {
				s.pkg = fn[:i+j]
			}
		}
	}
	registry[s.ID] = s
	return s
}

// Package is the import path of the package that registered the suite.
func (s *Suite) Package() string { return s.pkg }

// IsUpstreamIssue says whether a suite encodes an upstream issue (its
// Upstream names one, haproxy/haproxy#N), not a property or a suite.
func IsUpstreamIssue(s *Suite) bool { return strings.HasPrefix(s.Upstream, "haproxy/haproxy#") }

// ByID is the registered suite of an id.
func ByID(id string) (*Suite, bool) {
	s, ok := registry[id]
	return s, ok
}

// Conformance says whether a suite is a conformance property: labelled
// area:conformance, the one mark of one.
func Conformance(s *Suite) bool { return slices.Contains(s.Labels, "area:conformance") }

// All lists the registered suites by id.
func All() []*Suite {
	var out []*Suite
	for _, s := range registry {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Select returns the suites whose labels match a ginkgo label filter
// (e.g. "issue:3517", "area:peers && !slow").
func Select(filter string) ([]*Suite, error) {
	match, err := types.ParseLabelFilter(filter)
	if err != nil {
		return nil, fmt.Errorf("label filter %q: %w", filter, err)
	}
	var out []*Suite
	for _, s := range All() {
		if match(s.Labels) {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		var known []string
		for _, s := range All() {
			known = append(known, s.Labels...)
		}
		slices.Sort(known)
		return nil, fmt.Errorf("label filter %q selects no suite; labels in use: %s", filter, strings.Join(slices.Compact(known), " "))
	}
	return out, nil
}

package regtest

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Result is a runner's word on one test.
type Result string

const (
	Passed  Result = "passed"
	Failed  Result = "FAILED"
	Skipped Result = "skipped"
)

// Manifest lists the exported tests, what they check, and each test's
// validations; and the cases left out, with why.
type Manifest struct {
	Tests   []Entry   `json:"tests"`
	Refused []Refused `json:"not_exported"`
}

// Entry is one test of the manifest.
type Entry struct {
	Test
	Bad   string `json:"bad,omitempty"`   // the scoreboard's release without the fix
	Fixed string `json:"fixed,omitempty"` // the first release with it
	// Validations: the runs that checked the test against harp's verdict,
	// one per build (the newest kept).
	Validations []Validation `json:"validations,omitempty"`
}

// Validation is one run of a test on one build, beside harp's verdict
// of the same check on the same build.
type Validation struct {
	Build   string `json:"build"`   // the spec
	Version string `json:"version"` // haproxy -v's
	Runner  string `json:"runner"`  // name and version
	Result  Result `json:"result"`
	Harp    string `json:"harp,omitempty"` // harp's verdict of the check there
	Agrees  bool   `json:"agrees"`
	Date    string `json:"date"`
}

// Expect is the result the manifest expects of the test on a build: the
// one validated on that build spec, else on a build of the same version
// ("" when none was). The spec first: a patched build says the version of
// the commit it patches.
func (e Entry) Expect(build, version string) Result {
	for _, v := range e.Validations {
		if v.Build == build && v.Agrees {
			return v.Result
		}
	}
	for _, v := range e.Validations {
		if v.Version == version && v.Agrees {
			return v.Result
		}
	}
	return ""
}

// Record keeps v as the test's validation on its build by its runner,
// replacing an older one of the same build and runner.
func (e *Entry) Record(v Validation) {
	runner := func(v Validation) string { return strings.Fields(v.Runner + " ?")[0] }
	e.Validations = slices.DeleteFunc(e.Validations, func(o Validation) bool { return o.Build == v.Build && runner(o) == runner(v) })
	e.Validations = append(e.Validations, v)
	slices.SortFunc(e.Validations, func(a, b Validation) int { return strings.Compare(a.Build+a.Runner, b.Build+b.Runner) })
}

// Agrees says whether a runner's result and harp's verdict of the same
// check on the same build say the same: a failure where harp
// REPRODUCED, a pass where it PASSed, a skip where the case does not apply.
func Agrees(r Result, harp string) bool {
	return map[Result]string{Failed: "REPRODUCED", Passed: "PASS", Skipped: "N/A"}[r] == harp
}

// Limit is the first version a test runs on, from its `feature cmd
// "... -cc 'version_atleast(X)'"` ("3.0-dev0"), "" when it has none.
func Limit(text string) string {
	if m := limitRe.FindStringSubmatch(text); m != nil {
		return m[1]
	}
	return ""
}

var limitRe = regexp.MustCompile(`(?m)^feature cmd .*-cc '\s*version_atleast\(([\w.-]+)\)`)

// AgreesOn is Agrees, with a skip on a build older than the test's own
// version limit taken as the test's scope, whatever harp says there: a
// conformance property's test stands for harp's checks only from the
// version whose CLI says what it reads (the master's reload tells its
// outcome from 3.0). For an upstream fix's test, harp's case has the same
// limit, and says N/A there anyway.
func AgreesOn(r Result, harp, version, text string) bool {
	if r == Skipped && older(version, Limit(text)) {
		return true
	}
	return Agrees(r, harp)
}

// older: version's major.minor is below limit's ("3.0-dev0": 3.0).
func older(version, limit string) bool {
	mm := func(s string) (int, int, bool) {
		m := regexp.MustCompile(`^(\d+)\.(\d+)`).FindStringSubmatch(s)
		if m == nil {
			return 0, 0, false
		}
		a, _ := strconv.Atoi(m[1])
		b, _ := strconv.Atoi(m[2])
		return a, b, true
	}
	a1, b1, ok1 := mm(version)
	a2, b2, ok2 := mm(limit)
	return ok1 && ok2 && (a1 < a2 || a1 == a2 && b1 < b2)
}

// Load reads a manifest (an absent file is an empty one).
func Load(path string) (Manifest, error) {
	var m Manifest
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return m, nil
	}
	if err == nil {
		err = json.Unmarshal(data, &m)
	}
	if err != nil {
		return m, fmt.Errorf("manifest %s: %w", path, err)
	}
	return m, nil
}

// Save writes the manifest, indented, tests in file order.
func (m Manifest) Save(path string) error {
	slices.SortFunc(m.Tests, func(a, b Entry) int { return strings.Compare(a.File, b.File) })
	slices.SortFunc(m.Refused, func(a, b Refused) int { return strings.Compare(a.Check, b.Check) })
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// Entry is the manifest's entry of a file (nil when none).
func (m *Manifest) Entry(file string) *Entry {
	for i := range m.Tests {
		if m.Tests[i].File == file {
			return &m.Tests[i]
		}
	}
	return nil
}

// summary is the line VTest and varnishtest print for each test they ran:
// "#    top  TEST cli_x.vtc passed (0.512)", "... FAILED (1.2) exit=2",
// "... skipped".
var summary = regexp.MustCompile(`(?m)^#\s+top\s+TEST\s+(\S+)\s+(passed|FAILED|skipped)\b`)

// start opens a test's log (the runners print each test's log whole,
// even four at a time), and failure is a line saying why a test stopped.
var (
	start    = regexp.MustCompile(`(?m)^\*\s+top\s+TEST\s+(\S+)\s+starting`)
	failure  = regexp.MustCompile(`(?m)^---- +\S+ +(.*)$`)
	timedOut = regexp.MustCompile(`(?m)^#\s+top\s+TEST\s+\S+\s+TIMED OUT`)
	// crashed is the master's line on a worker that died on a signal
	// (SIGILL, SIGTRAP, SIGABRT, SIGBUS, SIGFPE, SIGSEGV), or the runner's
	// own on a haproxy it started (the master) that died on one: not
	// VTest's own SIGINT or SIGTERM at the end, nor its SIGKILL at a
	// timeout.
	crashed = regexp.MustCompile(`exited with code 13[2-69] \([^)]*\)|Bad exit status: \S+ exit \S+ signal (?:[4-8]|11) core \d+`)
)

// answers are the failures that are HAProxy's answer to the test: an
// expectation on its CLI answer, on a command's output or on haproxy -c
// not met, or an exit status that is not the expected one (a process
// that died on a signal among them). Any other failure (an argument the
// runner does not know, a macro, a regex it cannot compile, a haproxy
// that never started) says the test could not do its work: Error.
var answers = []string{"CLI expect failed", "shell_match failed", "Did not find expected string", "Bad exit status"}

// Error is a test that failed for a reason that is not HAProxy's answer.
const Error Result = "ERROR"

// Outcome is one test's result and, for a failure, the runner's reason.
type Outcome struct {
	Result Result
	Why    string
}

// Results reads a runner's output: each test's outcome by file name (its
// base name). A test the output does not name has none: the caller says
// so, never reads it as a pass.
func Results(out string) map[string]Outcome {
	rs := map[string]Outcome{}
	logs := map[string]string{}
	starts := start.FindAllStringSubmatchIndex(out, -1)
	for i, m := range starts {
		end := len(out)
		if i+1 < len(starts) {
			end = starts[i+1][0]
		}
		logs[base(out[m[2]:m[3]])] = out[m[0]:end]
	}
	for _, m := range summary.FindAllStringSubmatch(out, -1) {
		name := base(m[1])
		o := Outcome{Result: Result(m[2])}
		if o.Result == Failed {
			o.Result, o.Why = Error, "the runner's log says no reason"
			if c := crashed.FindStringSubmatch(logs[name]); c != nil {
				// A process of HAProxy's died on a signal: whatever line
				// stopped the test after it, the crash is HAProxy's doing.
				o.Result, o.Why = Failed, "a process died: "+strings.TrimSpace(c[0])
			} else if timedOut.MatchString(logs[name]) {
				o.Why = "no end within the runner's 10 s (killed)"
			} else if f := failure.FindStringSubmatch(logs[name]); f != nil {
				o.Why = strings.TrimSpace(f[1])
				if slices.ContainsFunc(answers, func(a string) bool { return strings.HasPrefix(o.Why, a) }) {
					o.Result = Failed
				}
			}
		}
		rs[name] = o
	}
	return rs
}

func base(name string) string { return name[strings.LastIndex(name, "/")+1:] }

// SameRun says whether two texts of a test run alike: the same once its
// title and comment lines are left out (words VTest prints, never runs),
// so a validation of one holds for the other.
func SameRun(a, b string) bool { return runs(a) == runs(b) }

func runs(text string) string {
	var keep []string
	for _, l := range strings.Split(text, "\n") {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "#") && !strings.HasPrefix(t, "#REGTEST_TYPE") || strings.HasPrefix(t, "varnishtest ") {
			continue
		}
		keep = append(keep, l)
	}
	return strings.Join(keep, "\n")
}

// CheckIDs reads a test's check: suite/id, or suite/{a,b}.variant for
// several checks of one variant (a.variant and b.variant).
func CheckIDs(check string) (suite string, ids []string) {
	suite, id, _ := strings.Cut(check, "/")
	if !strings.HasPrefix(id, "{") {
		return suite, []string{id}
	}
	set, variant, _ := strings.Cut(id[1:], "}")
	for _, a := range strings.Split(set, ",") {
		ids = append(ids, a+variant)
	}
	return suite, ids
}

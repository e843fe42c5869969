package suite

import (
	"strings"
	"testing"
	"time"
)

func TestParams(t *testing.T) {
	ps := []Param{NodesParam, Duration("DURATION", 15*time.Second, "how long"), OneOf("LAYOUT", "groups", "", "groups", "binds")}
	v, err := ValuesFor(ps, map[string]string{"NODES": "5", "OTHER": "x"})
	if err != nil || v.Int("NODES") != 5 || v.Duration("DURATION") != 15*time.Second || v.String("LAYOUT") != "groups" || !v.Given("NODES") || v.Given("LAYOUT") {
		t.Fatalf("values: %+v, %v", v, err)
	}
	for given, want := range map[string]string{
		"NODES=12":     `NODES="12": want a whole number from 3 to 9`,
		"NODES=three":  `NODES="three": want a whole number from 3 to 9`,
		"DURATION=-1s": "want a positive duration",
		"LAYOUT=rings": "want one of groups, binds",
	} {
		name, val, _ := strings.Cut(given, "=")
		if _, err := ValuesFor(ps, map[string]string{name: val}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", given, err, want)
		}
	}
}

func TestCheckParams(t *testing.T) {
	a := &Suite{ID: "a", Params: []Param{NodesParam}}
	b := &Suite{ID: "b"}
	if err := CheckParams([]*Suite{a, b}, map[string]string{"NODES": "4"}); err != nil {
		t.Errorf("a parameter one selected suite takes: %v", err)
	}
	if err := CheckParams([]*Suite{a}, map[string]string{"NODE": "4"}); err == nil || !strings.Contains(err.Error(), "NODE: no selected suite takes it (they take NODES)") {
		t.Errorf("a typo: %v", err)
	}
	if err := CheckParams([]*Suite{b}, map[string]string{"NODES": "4"}); err == nil || !strings.Contains(err.Error(), "take no parameters") {
		t.Errorf("a suite without parameters: %v", err)
	}
	if err := CheckParams([]*Suite{a}, map[string]string{"NODES": "2"}); err == nil || !strings.Contains(err.Error(), "suite a: NODES") {
		t.Errorf("a refused value: %v", err)
	}
	if _, err := ParseParams([]string{"NODES"}); err == nil {
		t.Error("a parameter without a value was accepted")
	}
	env := map[string]string{"NODES": "6", "THREADS": "4"}
	got := FromEnv([]*Suite{a}, func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if len(got) != 1 || got["NODES"] != "6" {
		t.Errorf("from the environment, only what the suites declare: %v", got)
	}
}

func TestSteps(t *testing.T) {
	s := &Suite{ID: "x", Params: []Param{NodesParam}, StepsFor: func(p Values) []string { return []string{"cut node" + p.String("NODES")} }}
	v, _ := ValuesFor(s.Params, map[string]string{"NODES": "5"})
	if got := s.StepsWith(v); got[0] != "cut node5" {
		t.Errorf("steps follow the run's parameters: %v", got)
	}
	if got := s.StepsWith(s.Defaults()); got[0] != "cut node3" {
		t.Errorf("steps with the defaults: %v", got)
	}
}

func TestReadmeTable(t *testing.T) {
	s := []*Suite{{ID: "9999", Upstream: "haproxy/haproxy#9999", Title: "a | b", Summary: "checks", Labels: []string{"issue:9999"}, Trials: 2, Noun: "runs", Params: []Param{NodesParam}}}
	out, err := WithTable("intro\n"+TableBegin+"\nold\n"+TableEnd+"\nrest\n", s)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "| #9999 | haproxy/haproxy#9999: a \\| b | `issue:9999` | 2 runs | `NODES` | checks |") || strings.Contains(out, "old") || !strings.HasSuffix(out, TableEnd+"\nrest\n") {
		t.Errorf("table:\n%s", out)
	}
	if _, err := WithTable("no markers", s); err == nil {
		t.Error("a README without markers was accepted")
	}
}

func TestRegisterAddsTheIssueLabel(t *testing.T) {
	s := Register(&Suite{ID: "selftest-register", Title: "t", Noun: "runs", Trials: 1, Labels: []string{"area:x"},
		Run: func() {}})
	defer delete(registry, s.ID)
	if len(s.Labels) != 2 || s.Labels[0] != "suite:selftest-register" {
		t.Errorf("labels: %v", s.Labels)
	}
	if got, err := Select("suite:selftest-register"); err != nil || len(got) != 1 {
		t.Errorf("select: %v, %v", got, err)
	}
	if _, err := Select("suite:nothing-here"); err == nil || !strings.Contains(err.Error(), "labels in use") {
		t.Errorf("a filter that selects nothing: %v", err)
	}
}

func TestPick(t *testing.T) {
	all := []string{"a", "b", "c"}
	self := func(s string) string { return s }
	for _, v := range []string{"", "all"} {
		if got, err := Pick(v, all, self, "kind"); err != nil || len(got) != 3 {
			t.Errorf("Pick(%q) = %v, %v", v, got, err)
		}
	}
	if got, err := Pick("c, a", all, self, "kind"); err != nil || strings.Join(got, "") != "ac" {
		t.Errorf("Pick keeps the suite's order: %v, %v", got, err)
	}
	if _, err := Pick("a,x", all, self, "kind"); err == nil || err.Error() != `no kind "x": want a, b, c or all` {
		t.Errorf("an unknown id: %v", err)
	}
	if err := Variants("K", "kinds", all, self, "kind").check("b,z"); err == nil {
		t.Errorf("Variants accepts an unknown id")
	}
}

// Asked for 3 trials, a suite of 21 cases runs every case three times;
// f084f4d ran the first 3 cases and said "in 1 of 3 cases".
func TestTrialsForCases(t *testing.T) {
	cases := &Suite{Trials: 21, Cases: 21, Noun: "cases"}
	plain := &Suite{Trials: 5, Noun: "reloads"}
	for _, c := range []struct {
		s     *Suite
		asked int
		want  int
		text  string
	}{
		{cases, 0, 21, "21 cases"}, {cases, 3, 63, "63 cases (3 rounds of 21)"}, {cases, 1, 21, "21 cases"},
		{plain, 0, 5, "5 reloads"}, {plain, 3, 3, "3 reloads"},
	} {
		if got, text := c.s.TrialsFor(c.asked), c.s.TrialsText(c.asked); got != c.want || text != c.text {
			t.Errorf("%+v asked %d: %d %q, want %d %q", c.s, c.asked, got, text, c.want, c.text)
		}
	}
}

// Register records the package that registered a suite, and harp suites
// says where its code is.
func TestRegisterRecordsThePackage(t *testing.T) {
	s := &Suite{ID: "pkg-probe", Title: "t", Noun: "trials", Trials: 1, Run: func() {}}
	Register(s)
	defer delete(registry, s.ID)
	if s.Package() != "github.com/harp-project/harp/harness/core/suite" {
		t.Errorf("Package() = %q", s.Package())
	}
	var b strings.Builder
	Describe(&b, []*Suite{s})
	if !strings.Contains(b.String(), "  code:     harness/core/suite\n") {
		t.Errorf("harp suites lacks where the code is:\n%s", b.String())
	}
}

package fixcase

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/harp-project/harp/fixtures"
	"github.com/harp-project/harp/harness/core/obs"
)

func TestLoadJudged(t *testing.T) {
	files := fstest.MapFS{
		"d/a.case": {Data: []byte("fix f\norder 1\ndoes d\nexpects e\nkind stats\nwant go\n")},
		"d/b.case": {Data: []byte("fix f\norder 2\ndoes d\nexpects e\nkind stats\nwant is \"x\"\nwhy w\n")},
	}
	yes := func(string) (bool, string, error) { return true, "", nil }
	cs, err := LoadJudged(files, "d", GoWants{"a": yes})
	if err != nil || len(cs) != 2 {
		t.Fatalf("%+v %v", cs, err)
	}
	if ok, _, _ := cs[0].Want("anything"); !ok {
		t.Error("a is judged by its Go judge")
	}
	if ok, _, _ := cs[1].Want("y"); ok {
		t.Error("b is judged by its file's rule")
	}
	if _, err := LoadJudged(files, "d", nil); err == nil || !strings.Contains(err.Error(), "a: the file says want go") {
		t.Errorf("want go without a Go judge: %v", err)
	}
	if _, err := LoadJudged(files, "d", GoWants{"a": yes, "z": yes}); err == nil || !strings.Contains(err.Error(), "a Go judge of z") {
		t.Errorf("a Go judge of no case: %v", err)
	}
}

func TestJudgeRules(t *testing.T) {
	cs := []Judged{{Case: Case{ID: "c", Fix: "0123456789ab", Does: "a thing"}, Want: func(a string) (bool, string, error) {
		if a == "garbled" {
			return false, "", errors.New("show proc: no master line")
		}
		return a == "ok", "said " + a, nil
	}}}
	died := obs.Opt(obs.Value(obs.Exit{Process: "worker", Signal: "SIGSEGV"}))
	for _, c := range []struct {
		f                  Facts
		failed, violation  bool
		unmet, wantMessage string
	}{
		{f: Facts{Case: "c", Answer: obs.Value("ok")}},
		{f: Facts{Case: "c", Answer: obs.Value("no")}, failed: true, violation: true, wantMessage: "c (upstream 0123456789ab): said no"},
		{f: Facts{Case: "c", Answer: obs.Value("ok"), Died: died}, failed: true, violation: true, wantMessage: "the worker died on a thing"},
		{f: Facts{Case: "c", Answer: obs.Failure[string]("cut"), Died: died}, failed: true, violation: true, wantMessage: "the worker died on a thing"},
		{f: Facts{Case: "c", Skip: "c needs HAProxy 2.7"}},
		{f: Facts{Case: "c", Answer: obs.Failure[string]("the control config does not load")}, unmet: "c: the control config does not load"},
		// Harp's failures are never answers (f084f4d judged "" for each).
		{f: Facts{Case: "c", Answer: obs.Failure[string]("connecting to 9998/tcp: refused")}, unmet: "c: connecting to 9998/tcp: refused"},
		{f: Facts{Case: "c"}, unmet: "c: never observed"},
		// Output harp cannot parse is unknown, never a violation.
		{f: Facts{Case: "c", Answer: obs.Value("garbled")}, unmet: "c: HAProxy's answer decides nothing: show proc: no master line"},
		{f: Facts{Case: "nosuch"}, unmet: "no case nosuch"},
	} {
		got, violation, unmet := Judge(cs, c.f)
		if (len(got.Failed()) > 0) != c.failed || (violation != "") != c.violation || unmet != c.unmet || !strings.Contains(violation, c.wantMessage) {
			t.Errorf("%+v: checks %+v, violation %q, unmet %q", c.f, got, violation, unmet)
		}
		if (c.f.Skip != "" || c.unmet != "") && len(got) != 0 {
			t.Errorf("%+v: not applicable or unmet is no check: %+v", c.f, got)
		}
	}
}

// Facts reach the one rule on observations: a failed answer is an
// unknown verdict.MarkUnknown sees, and a death explains it.
func TestFactsUnknown(t *testing.T) {
	if u := obs.Unknowns(Facts{Case: "c", Answer: obs.Failure[string]("no answer on 9998/tcp within 10s")}); len(u) != 1 || u[0] != "answer: no answer on 9998/tcp within 10s" {
		t.Errorf("unknowns %q", u)
	}
	if u := obs.Unknowns(Facts{Case: "c", Answer: obs.Value("")}); len(u) != 0 {
		t.Errorf("an answer is known: %q", u)
	}
	dead := Facts{Case: "c", Answer: obs.Failure[string]("cut"), Died: obs.Opt(obs.Value(obs.Exit{Process: "worker"}))}
	if u, exited := obs.Judged(dead); !exited || len(u) != 1 {
		t.Errorf("a death explains the cut answer: %q %v", u, exited)
	}
}

// Facts recorded before answers were observations read as they meant.
func TestFactsOldForm(t *testing.T) {
	var fs []Facts
	err := json.Unmarshal([]byte(`[{"case":"a","fix":"f","answer":"x\n"},{"case":"b","fix":"f","harp_error":"reading: EOF","answer":""},{"case":"c","fix":"f","answer":"","worker_died":true},{"case":"d","fix":"f","not_applicable":"d needs HAProxy 3.1","answer":""}]`), &fs)
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := fs[0].Answer.Get(); !ok || v != "x\n" {
		t.Errorf("a: %+v", fs[0])
	}
	if fs[1].Answer.Unknown() != "reading: EOF" || !fs[2].Dead() || fs[3].Skip == "" {
		t.Errorf("b, c, d: %+v", fs[1:])
	}
	b, _ := json.Marshal(Facts{Case: "e", Answer: obs.Failure[string]("cut"), Died: obs.Opt(obs.Value(obs.Exit{Process: "worker"}))})
	var back Facts
	if err := json.Unmarshal(b, &back); err != nil || back.Answer.Unknown() != "cut" || !back.Dead() {
		t.Errorf("round trip of %s: %+v %v", b, back, err)
	}
}

func TestThenAndArrow(t *testing.T) {
	if got := Then("a" + ThenMark + "b\n"); got != "b\n" {
		t.Errorf("Then: %q", got)
	}
	if b, a, ok := Arrow("trash used 3 -> 203 after 200 quit", "trash used"); !ok || b != 3 || a != 203 {
		t.Errorf("Arrow: %d %d %v", b, a, ok)
	}
	if _, _, ok := Arrow("tpurge used 3 -> 0", "trash used"); ok {
		t.Error("Arrow read another label's counts")
	}
}

// Every shipped case file parses, in a folder per suite; case IDs are
// unique across folders (they are check IDs, and fixtures/upstream-bugs
// names them), each with a 12-digit fix and its words; every case a
// capture recorded and every case judgements.tsv names is a file there.
func TestShippedCases(t *testing.T) {
	names, _ := fs.Glob(fixtures.UpstreamFixes, "upstream-fixes/*/*.case")
	if len(names) < 50 {
		t.Fatalf("%d case files", len(names))
	}
	folder := map[string]string{}
	for _, name := range names {
		data, _ := fs.ReadFile(fixtures.UpstreamFixes, name)
		c, err := Parse(name, data)
		if err != nil {
			t.Error(err)
			continue
		}
		if f, ok := folder[c.ID]; ok {
			t.Errorf("%s: in %s and %s", c.ID, f, path.Dir(name))
		}
		folder[c.ID] = path.Base(path.Dir(name))
		if len(c.Fix) != 12 || c.Does == "" || c.Expects == "" {
			t.Errorf("%s: a 12-digit fix and its words: %+v", name, c)
		}
	}
	captures, _ := fs.Glob(os.DirFS("../../../fixtures/upstream-fixes/captures"), "*.json")
	if len(captures) == 0 {
		t.Fatal("no captures")
	}
	for _, file := range captures {
		data, _ := os.ReadFile("../../../fixtures/upstream-fixes/captures/" + file)
		var facts []Facts
		if err := json.Unmarshal(data, &facts); err != nil {
			t.Fatal(err)
		}
		for _, f := range facts {
			if folder[f.Case] == "" {
				t.Errorf("%s: case %s has no file", file, f.Case)
			}
		}
	}
	tsv, err := os.ReadFile("../../../fixtures/upstream-bugs/judgements.tsv")
	if err != nil {
		t.Fatal(err)
	}
	catches := regexp.MustCompile(`upstream-fixes-([a-z]+)/([a-z0-9-]+)`).FindAllStringSubmatch(string(tsv), -1)
	if len(catches) < 50 {
		t.Errorf("judgements.tsv names %d cases", len(catches))
	}
	for _, m := range catches {
		if folder[m[2]] != m[1] {
			t.Errorf("judgements.tsv: %s, but the case's file is in %q", m[0], folder[m[2]])
		}
	}
}

func TestDiffCaptured(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(dir+"/facts-x.json", []byte(`[{"case":"c","answer":"no"},{"case":"other","answer":"?"}]`), 0o644)
	cs := []Judged{{Case: Case{ID: "c"}, Want: func(a string) (bool, string, error) { return a == "ok", "said " + a, nil }}}
	if err := DiffCaptured(dir, cs, map[string][]string{"facts-x.json": {"c"}}); err != nil {
		t.Errorf("the failed case as wanted: %v", err)
	}
	if err := DiffCaptured(dir, cs, map[string][]string{"facts-x.json": nil}); err == nil || !strings.Contains(err.Error(), "facts-x.json: failed [c], want []") {
		t.Errorf("a failure not wanted: %v", err)
	}
	if err := DiffCaptured(dir, cs, map[string][]string{"facts-none.json": nil}); err == nil {
		t.Error("a missing capture passed")
	}
	// A new case no capture holds is an error, not a case left unjudged.
	fresh := append(cs, Judged{Case: Case{ID: "new-case"}, Want: cs[0].Want})
	if err := DiffCaptured(dir, fresh, map[string][]string{"facts-x.json": {"c"}}); err == nil || !strings.Contains(err.Error(), "new-case has no captured facts") {
		t.Errorf("a case without captures: %v", err)
	}
}

// The library-list case applies only to a build that dumps its
// libraries: on one built with USE_DL= (or musl) it is not applicable,
// never the double print (f084f4d: REPRODUCED, "printed 0 times").
func TestNotApplicableByCapability(t *testing.T) {
	cs, err := Load(fixtures.UpstreamFixes, "upstream-fixes/master")
	if err != nil {
		t.Fatal(err)
	}
	var libs Case
	for _, c := range cs {
		if c.ID == "exec-mworker-libs-dumped-once" {
			libs = c
		}
	}
	vv, err := os.ReadFile("../../../fixtures/captures/3.0.11-1+deb13u5/haproxy-vv.txt")
	if err != nil {
		t.Fatal(err)
	}
	if why := libs.NotApplicable("3.0.11-1+deb13u5", string(vv)); why != "" {
		t.Errorf("Debian's 3.0.11 dumps its libraries: %s", why)
	}
	noDL := strings.Replace(string(vv), "+DL ", "-DL ", 1)
	if why := libs.NotApplicable("3.0.11-1+deb13u5", noDL); !strings.Contains(why, "built without DL") {
		t.Errorf("USE_DL=: %q", why)
	}
	if why := libs.NotApplicable("3.0.11", ""); !strings.Contains(why, "no feature list") {
		t.Errorf("no -vv: %q", why)
	}
	if why := libs.NotApplicable("2.5.14", string(vv)); !strings.Contains(why, "needs HAProxy 2.6") {
		t.Errorf("too old: %q", why)
	}
}

// Every shipped case is in at least one capture of a real build's facts
// (fixtures/upstream-fixes/captures): a case without one would be judged
// by TestJudgeOnCaptures on nothing, and its judge never met real output.
func TestEveryCaseCaptured(t *testing.T) {
	names, _ := fs.Glob(fixtures.UpstreamFixes, "upstream-fixes/*/*.case")
	files, _ := fs.Glob(os.DirFS("../../../fixtures/upstream-fixes/captures"), "facts-*.json")
	if len(files) == 0 {
		t.Fatal("no capture")
	}
	captured := map[string]bool{}
	for _, f := range files {
		data, _ := os.ReadFile(path.Join("../../../fixtures/upstream-fixes/captures", f))
		var facts []Facts
		if err := json.Unmarshal(data, &facts); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, x := range facts {
			captured[x.Case] = true
		}
	}
	for _, n := range names {
		if id := strings.TrimSuffix(path.Base(n), ".case"); !captured[id] {
			t.Errorf("case %s is in no capture: run it on the release tags and add its facts to fixtures/upstream-fixes/captures", id)
		}
	}
}

// DiffAnswers names an answer judged otherwise and one of no case.
func TestDiffAnswers(t *testing.T) {
	cases := []Judged{{Case: Case{ID: "c"}, Want: func(a string) (bool, string, error) { return a == "good", "bad answer", nil }}}
	if err := DiffAnswers(cases, []Answer{{ID: "c", Build: "b1", Text: "good", Held: true}, {ID: "c", Build: "b2", Text: "bad", Held: false}}); err != nil {
		t.Error(err)
	}
	err := DiffAnswers(cases, []Answer{{ID: "c", Build: "b1", Text: "bad", Held: true}, {ID: "nosuch", Build: "b1", Text: "", Held: true}})
	if err == nil || !strings.Contains(err.Error(), "c on b1: held false") || !strings.Contains(err.Error(), "no case nosuch") {
		t.Errorf("err = %v", err)
	}
}

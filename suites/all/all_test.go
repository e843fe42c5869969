package all_test

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/harp-project/harp/harness/core/suite"
	"github.com/harp-project/harp/harness/live/suiteenv"
	"github.com/harp-project/harp/harness/ops/report"
	_ "github.com/harp-project/harp/suites/all"
	"github.com/harp-project/harp/suites/internal/discover"
)

// Every suite directory is imported: a stale list would hide a suite.
func TestImportListIsCurrent(t *testing.T) {
	want, err := discover.Source("..")
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("suites.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("suites/all/suites.go is stale: run `make generate`\nwant:\n%s", want)
	}
}

// README's suite table is the registry's: a stale one fails here.
func TestReadmeTableIsCurrent(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	want, err := suite.WithTable(string(readme), suite.All())
	if err != nil {
		t.Fatal(err)
	}
	if want != string(readme) {
		t.Errorf("README.md's suites table is stale: run `make readme`")
	}
}

// What every registered suite must have for make, reports and selection.
func TestEverySuiteIsComplete(t *testing.T) {
	for _, s := range suite.All() {
		if s.Upstream == "" || s.Summary == "" || len(s.StepsWith(s.Defaults())) == 0 {
			t.Errorf("suite %s lacks an upstream, a summary or steps", s.ID)
		}
		if strings.ContainsAny(s.ID, " '\"$/") {
			t.Errorf("suite id %q cannot be a make target", s.ID)
		}
		for _, p := range s.Params {
			if err := p.Check(p.Default); p.Default != "" && err != nil {
				t.Errorf("suite %s: its own default fails: %v", s.ID, err)
			}
		}
	}
}

// report.SplitFrom names suites that exist and, as what they were split
// from, ids no suite has any more: an id back in use would have its runs
// read twice.
func TestSplitFromNamesRealSuites(t *testing.T) {
	for now, was := range report.SplitFrom {
		if _, ok := suite.ByID(now); !ok {
			t.Errorf("SplitFrom: no suite %s", now)
		}
		if _, ok := suite.ByID(was); ok {
			t.Errorf("SplitFrom: %s was split, yet a suite has that id", was)
		}
	}
}

// The registry keeps a suite's Run untyped (it links no Docker): every
// registered one must be what suiteenv.Run calls.
func TestEveryRunIsARunFunc(t *testing.T) {
	for _, s := range suite.All() {
		if _, ok := s.Run.(suiteenv.RunFunc); !ok {
			t.Errorf("%s: Run is a %T, not a suiteenv.RunFunc", s.ID, s.Run)
		}
	}
}

// A suite's directory follows from its id, so one name finds the other:
// 3517 -> issue3517, conf-X -> conformance/X, upstream-fixes-Xs ->
// regressions/Xfixes (the area singular), cluster-X -> cluster/X, any other -> X (hyphens
// dropped in every directory).
func TestSuiteDirectoryFollowsItsID(t *testing.T) {
	flat := func(s string) string { return strings.ReplaceAll(s, "-", "") }
	for _, s := range suite.All() {
		var want string
		switch id := s.ID; {
		case strings.Trim(id, "0123456789") == "":
			want = "issue" + id
		case strings.HasPrefix(id, "conf-"):
			want = "conformance/" + flat(strings.TrimPrefix(id, "conf-"))
		case strings.HasPrefix(id, "upstream-fixes-"):
			want = "regressions/" + strings.TrimSuffix(flat(strings.TrimPrefix(id, "upstream-fixes-")), "s") + "fixes"
		case strings.HasPrefix(id, "cluster-"):
			want = "cluster/" + flat(strings.TrimPrefix(id, "cluster-"))
		default:
			want = flat(id)
		}
		_, dir, ok := strings.Cut(s.Package(), "/harp/suites/")
		if !ok || dir != want {
			t.Errorf("suite %s lives in suites/%s: its id says suites/%s", s.ID, dir, want)
		}
	}
}

package suiteenv

import (
	"context"
	"fmt"
	"testing"

	"github.com/harp-project/harp/harness/core/suite"
	"github.com/harp-project/harp/harness/core/verdict"
	"github.com/harp-project/harp/images"
)

// Trials take the picked variants in turn, in the suite's order, again
// from the first past them, each pass a round; a value the pick refuses
// is the outcome's error, and no trial runs.
func TestRunPicked(t *testing.T) {
	all := []string{"a", "b", "c"}
	id := func(s string) string { return s }
	pick := func(v string) ([]string, error) { return suite.Pick(v, all, id, "letter") }
	params := []suite.Param{suite.Variants("LETTERS", "the letters", all, id, "letter")}
	run := func(given string, trials int) (ran []string, out verdict.Outcome) {
		v, err := suite.ValuesFor(params, map[string]string{"LETTERS": given})
		if err != nil {
			// as if the runner had not checked it
			v, _ = suite.ValuesFor([]suite.Param{suite.Text("LETTERS", "", "unchecked", nil)}, map[string]string{"LETTERS": given})
		}
		env := &Env{Suite: &suite.Suite{ID: "p", Noun: "letters"}, Image: &images.Image{Name: "3.2.1-1"}, Trials: trials, Params: v, Logf: func(string, ...any) {}}
		out = RunPicked(context.Background(), env, "LETTERS", pick, func(ctx context.Context, tr *verdict.Trial, s string, round int) error {
			ran = append(ran, fmt.Sprintf("%d%s%d", tr.N, s, round))
			return nil
		})
		return ran, out
	}
	if ran, out := run("c,a", 5); fmt.Sprint(ran) != "[1a0 2c0 3a1 4c1 5a2]" || out.Err != nil || len(out.Trials) != 5 {
		t.Errorf("c,a over 5 trials: ran %v, %+v", ran, out)
	}
	if ran, out := run("nope", 2); len(ran) != 0 || out.Err == nil {
		t.Errorf("an unknown variant: ran %v, err %v", ran, out.Err)
	}
}

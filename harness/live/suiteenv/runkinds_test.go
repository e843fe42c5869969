package suiteenv

import (
	"context"
	"errors"
	"testing"

	"github.com/harp-project/harp/harness/core/obs"
	"github.com/harp-project/harp/harness/core/suite"
	"github.com/harp-project/harp/harness/core/verdict"
	"github.com/harp-project/harp/images"
)

// Trials take the kinds in turn; a check that cannot begin does not run
// and its trial is judged from what begin recorded; the note is what held
// then what was violated; a check's error is the run's.
func TestRunKinds(t *testing.T) {
	env := &Env{Suite: &suite.Suite{ID: "k", Noun: "checks"}, Image: &images.Image{Name: "3.2.1-1"}, Trials: 5, Logf: func(string, ...any) {}}
	var ran []string
	kinds := []Kind[string]{
		{Name: "one", Check: func(ctx context.Context, s string, tr *verdict.Trial, f *obs.KindRecord) error {
			ran = append(ran, s+" one")
			f.Held("h")
			f.Violated("v")
			return nil
		}},
		{Name: "two", Check: func(ctx context.Context, s string, tr *verdict.Trial, f *obs.KindRecord) error {
			ran = append(ran, s+" two")
			if tr.N == 4 {
				return errors.New("show peers: timeout")
			}
			return nil
		}},
	}
	judge := func(f obs.KindRecord) (string, string) { return f.Decide(f.Kind) }
	out := RunKinds(context.Background(), env, kinds, judge, func(ctx context.Context, f *obs.KindRecord) (string, bool) {
		if len(ran) == 1 {
			f.Unmet = "not meshed"
			ran = append(ran, "skipped")
			return "", false
		}
		return "s", true
	})
	if len(out.Trials) != 4 || out.Err == nil || out.Err.Error() != "check 4: show peers: timeout" {
		t.Fatalf("a check's error ends the run: %+v", out)
	}
	if got := ran; len(got) != 4 || got[0] != "s one" || got[1] != "skipped" || got[2] != "s one" || got[3] != "s two" {
		t.Errorf("ran %q", got)
	}
	t1, t2 := out.Trials[0], out.Trials[1]
	if t1.Violation != "one: v" || len(t1.Notes) != 1 || t1.Notes[0] != "h; v" {
		t.Errorf("trial 1: %q, notes %q", t1.Violation, t1.Notes)
	}
	if ev, ok := t2.Evidence.(*obs.KindEvidence); !ok || ev.Kind != "two" || ev.Facts.Kind != "two" || t2.Unmet != "two: not meshed" || len(t2.Notes) != 0 {
		t.Errorf("trial 2: %+v, unmet %q", t2.Evidence, t2.Unmet)
	}
	if got := KindNames(kinds); got != "one, two" {
		t.Errorf("KindNames: %q", got)
	}
}

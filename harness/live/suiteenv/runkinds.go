package suiteenv

import (
	"context"
	"strings"

	"github.com/harp-project/harp/harness/core/obs"
	"github.com/harp-project/harp/harness/core/verdict"
)

// Kind is one kind of check of a property, run on what its trial began
// (an S: the suite's nodes, a session) and recording what it saw in its
// obs.KindRecord; an error is harp's failure, not the check's verdict.
type Kind[S any] struct {
	Name  string
	Check func(ctx context.Context, s S, t *verdict.Trial, f *obs.KindRecord) error
}

// RunKinds runs trial N as kinds[(N-1) mod len(kinds)], each kind in turn,
// then again from the first. A trial's evidence is an obs.KindEvidence
// named by its kind; begin makes what the check runs on, or records in f
// why it cannot (false: the check does not run). What held and what was
// violated become the trial's note, and judge decides the trial from its
// facts whatever the check returned, as the one check named by its kind
// (verdict.KindCheck). It is the trial loop that the suites
// checking one property kind by kind had each written.
func RunKinds[S any](ctx context.Context, env *Env, kinds []Kind[S], judge func(obs.KindRecord) (violation, unmet string), begin func(ctx context.Context, f *obs.KindRecord) (S, bool)) verdict.Outcome {
	return env.RunTrials(ctx, func(ctx context.Context, t *verdict.Trial) error {
		k := kinds[(t.N-1)%len(kinds)]
		ev := &obs.KindEvidence{Kind: k.Name, Facts: obs.KindRecord{Kind: k.Name}}
		t.Evidence = ev
		f := &ev.Facts
		var err error
		if s, ok := begin(ctx, f); ok {
			err = k.Check(ctx, s, t, f)
		}
		if seen := f.Seen(); len(seen) > 0 {
			t.Notef("%s", strings.Join(seen, "; "))
		}
		t.Violation, t.Unmet = judge(*f)
		t.Checks = verdict.KindCheck(k.Name, t.Violation, t.Unmet)
		return err
	})
}

// KindNames lists the kinds' names, for a suite's steps.
func KindNames[S any](kinds []Kind[S]) string {
	return List(kinds, func(k Kind[S]) string { return k.Name }, ", ")
}

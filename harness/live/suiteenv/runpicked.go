package suiteenv

import (
	"context"

	"github.com/harp-project/harp/harness/core/verdict"
)

// RunPicked runs the trials over the variants a suite.Variants parameter picks
// (pick, the suite's suite.Pick of param's value, in the suite's order): trial
// N on the ((N-1) mod count)th, each picked variant in turn, then again
// from the first; round is how many times every picked variant ran
// before it (0 in the first pass), for a suite that varies something
// else pass by pass. A value pick refuses is the outcome's error (the
// runner checked it before any work). Every suite with variants cycles
// so.
func RunPicked[T any](ctx context.Context, env *Env, param string, pick func(string) ([]T, error), one func(ctx context.Context, t *verdict.Trial, v T, round int) error) verdict.Outcome {
	vs, err := pick(env.Params.String(param))
	if err != nil {
		return verdict.Outcome{Err: err}
	}
	return env.RunTrials(ctx, func(ctx context.Context, t *verdict.Trial) error {
		return one(ctx, t, vs[(t.N-1)%len(vs)], (t.N-1)/len(vs))
	})
}

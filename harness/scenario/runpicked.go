package scenario

import (
	"context"

	"github.com/harp-project/harp/harness/verdict"
)

// RunPicked runs the trials over the variants a Variants parameter picks
// (pick, the suite's Pick of param's value, in the suite's order): trial
// N on the ((N-1) mod count)th, each picked variant in turn, then again
// from the first. A value pick refuses is the outcome's error (the runner
// checked it before any work). Every suite with variants cycles so.
func RunPicked[T any](ctx context.Context, env *Env, param string, pick func(string) ([]T, error), one func(ctx context.Context, t *verdict.Trial, v T) error) verdict.Outcome {
	vs, err := pick(env.Params.String(param))
	if err != nil {
		return verdict.Outcome{Err: err}
	}
	return env.RunTrials(ctx, func(ctx context.Context, t *verdict.Trial) error {
		return one(ctx, t, vs[(t.N-1)%len(vs)])
	})
}

package suiteenv

import "context"

// RunSteps runs a trial's named steps in order, each writing the trial's
// facts as it goes. A step that returns false, having recorded why the
// trial cannot go on (an unmet precondition, a process seen gone), or an
// error (harp's), ends the trial there; the error is RunSteps' answer. A
// suite whose trial is a sequence of steps runs them so, in place of a
// chain of early returns.
func RunSteps(ctx context.Context, steps ...func(context.Context) (next bool, err error)) error {
	for _, step := range steps {
		if next, err := step(ctx); !next || err != nil {
			return err
		}
	}
	return nil
}

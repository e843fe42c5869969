package suiteenv

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

// Steps run in order until one says stop (false) or fails; its error is
// the answer, and no later step runs.
func TestRunSteps(t *testing.T) {
	var ran []string
	step := func(name string, next bool, err error) func(context.Context) (bool, error) {
		return func(context.Context) (bool, error) {
			ran = append(ran, name)
			return next, err
		}
	}
	ctx := context.Background()
	if err := RunSteps(ctx, step("a", true, nil), step("b", true, nil)); err != nil || fmt.Sprint(ran) != "[a b]" {
		t.Errorf("all steps: ran %v, err %v", ran, err)
	}
	ran = nil
	if err := RunSteps(ctx, step("a", false, nil), step("b", true, nil)); err != nil || fmt.Sprint(ran) != "[a]" {
		t.Errorf("a step that stops: ran %v, err %v", ran, err)
	}
	ran = nil
	boom := errors.New("show proc: EOF")
	if err := RunSteps(ctx, step("a", true, nil), step("b", true, boom), step("c", true, nil)); err != boom || fmt.Sprint(ran) != "[a b]" {
		t.Errorf("a step that fails: ran %v, err %v", ran, err)
	}
}

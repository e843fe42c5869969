package suiteenv

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/harp-project/harp/harness/core/suite"
	"github.com/harp-project/harp/harness/core/verdict"
	"github.com/harp-project/harp/harness/live/node"
	"github.com/harp-project/harp/images"
)

func TestRunTrials(t *testing.T) {
	var lines []string
	env := &Env{Suite: &suite.Suite{ID: "3517", Noun: "reloads"}, Image: &images.Image{Name: "3.4.7-1"}, Trials: 3,
		Logf: func(f string, a ...any) { lines = append(lines, f) }}
	out := env.RunTrials(context.Background(), func(ctx context.Context, tr *verdict.Trial) error {
		tr.Notef("round %d", tr.N)
		if tr.N == 2 {
			tr.Violation = "lost"
			return Stop
		}
		return nil
	})
	if len(out.Trials) != 2 || out.Err != nil || out.Trials[1].Violation != "lost" || out.Trials[0].Notes[0] != "round 1" || len(lines) != 2 {
		t.Errorf("Stop ends after the trial: %+v, %d progress lines", out, len(lines))
	}
	out = env.RunTrials(context.Background(), func(ctx context.Context, tr *verdict.Trial) error { return errors.New("show proc: timeout") })
	if len(out.Trials) != 1 || out.Err == nil || out.Err.Error() != "reload 1: show proc: timeout" {
		t.Errorf("a harness error ends the run, named after its trial: %+v", out)
	}
	if v, _, _ := verdict.Decide(out, "reloads"); v != verdict.Error {
		t.Errorf("a harness error is an ERROR, not %s", v)
	}
}

func TestRunTrialsOn(t *testing.T) {
	var mu sync.Mutex
	var lines []string
	env := &Env{Suite: &suite.Suite{ID: "3517", Noun: "reloads"}, Image: &images.Image{Name: "3.4.7-1"}, Trials: 5,
		Logf: func(f string, a ...any) { mu.Lock(); lines = append(lines, fmt.Sprintf(f, a...)); mu.Unlock() }}
	a, b := &node.Node{}, &node.Node{}
	env.Watch("node-a", a)
	env.Watch("node-b", b)
	on := map[int]*node.Node{}
	out := env.RunTrialsOn(context.Background(), []*node.Node{a, b}, func(ctx context.Context, n *node.Node, tr *verdict.Trial) error {
		mu.Lock()
		on[tr.N] = n
		mu.Unlock()
		if n == b {
			tr.Violation = "lost"
		}
		return nil
	})
	if out.Err != nil || len(out.Trials) != 5 || len(lines) != 5 {
		t.Fatalf("every trial runs once: %+v, %d progress lines", out, len(lines))
	}
	for i, tr := range out.Trials {
		want := map[bool]*node.Node{true: a, false: b}[tr.N%2 == 1]
		if tr.N != i+1 || on[tr.N] != want || (tr.Violation != "") != (want == b) {
			t.Errorf("trial %d (at %d) ran on the wrong node or is out of order: %+v", tr.N, i, tr)
		}
	}
	// A harness error on one node stops the other's trials too.
	out = env.RunTrialsOn(context.Background(), []*node.Node{a, b}, func(ctx context.Context, n *node.Node, tr *verdict.Trial) error {
		if n == a {
			return errors.New("show proc: timeout")
		}
		<-ctx.Done()
		return ctx.Err()
	})
	if out.Err == nil || out.Err.Error() != "reload 1: show proc: timeout" {
		t.Errorf("the first harness error is the outcome's: %v", out.Err)
	}
	if v, _, _ := verdict.Decide(out, "reloads"); v != verdict.Error {
		t.Errorf("a harness error on one node is an ERROR, not %s", v)
	}
	// Stop on one node ends that node's trials only.
	out = env.RunTrialsOn(context.Background(), []*node.Node{a, b}, func(ctx context.Context, n *node.Node, tr *verdict.Trial) error {
		if n == a {
			return Stop
		}
		return nil
	})
	if len(out.Trials) != 3 || out.Trials[0].N != 1 || out.Trials[2].N != 4 {
		t.Errorf("Stop on node a: want trials 1, 2, 4: %+v", out.Trials)
	}
}

package peerfuzz

import (
	"context"
	"fmt"
	"time"
)

// Options of a fuzz run.
type Options struct {
	Seed          int64
	Duration      time.Duration
	MinimizeTries int // runs the minimizer may spend (0: 40)
	Progress      func(format string, args ...any)
}

// Result is what a fuzz run did and found.
type Result struct {
	Seed    int64         `json:"seed"`
	Inputs  int           `json:"inputs"`
	Bytes   int           `json:"bytes"`
	Took    time.Duration `json:"took_ns"`
	Finding *Finding      `json:"finding,omitempty"`
	Input   *Input        `json:"input,omitempty"` // what triggered the finding
	// Alone says whether the triggering input, sent alone to a restarted
	// node, triggers it again (else the finding needed what came before:
	// it is kept, not minimized).
	Alone     bool   `json:"alone"`
	Minimized *Input `json:"minimized,omitempty"`
	Tries     int    `json:"minimize_tries,omitempty"`
	// Replayed says whether the minimized input triggered it once more,
	// on a restarted node, after minimizing.
	Replayed bool `json:"replayed"`
}

// Fuzz sends generated inputs until one triggers a detector or the time
// is up; a finding is then checked alone on a restarted node, minimized
// and replayed.
func Fuzz(ctx context.Context, t *Target, o Options) (Result, error) {
	res := Result{Seed: o.Seed}
	say := o.Progress
	if say == nil {
		say = func(string, ...any) {}
	}
	if o.MinimizeTries == 0 {
		o.MinimizeTries = 40
	}
	start := time.Now()
	deadline := start.Add(o.Duration)
	last := start
	for n := 0; time.Now().Before(deadline) && ctx.Err() == nil; n++ {
		in := Generate(o.Seed, n)
		f, err := t.Run(ctx, in)
		if err != nil {
			return res, fmt.Errorf("input %d: %w", n, err)
		}
		res.Inputs, res.Bytes = res.Inputs+1, res.Bytes+in.Size()
		if time.Since(last) >= 10*time.Second {
			last = time.Now()
			say("fuzz: %d inputs (%d bytes), no finding yet, %s left", res.Inputs, res.Bytes, time.Until(deadline).Round(time.Second))
		}
		if f == nil {
			continue
		}
		res.Finding, res.Input = f, &in
		say("fuzz: input %d (seed %d): %s", n, o.Seed, f)
		still := func(c Input) bool {
			if t.Reset(ctx) != nil {
				return false
			}
			g, err := t.Run(ctx, c)
			return err == nil && Same(g, f)
		}
		if res.Alone = still(in); !res.Alone {
			say("fuzz: input %d alone on a restarted node does not trigger it: it needed what came before", n)
			break
		}
		say("fuzz: minimizing input %d (%d steps, %d bytes; at most %d runs)", n, len(in.Steps), in.Size(), o.MinimizeTries)
		m, tries := Minimize(in, still, o.MinimizeTries)
		res.Minimized, res.Tries = &m, tries
		res.Replayed = still(m)
		say("fuzz: minimized to %d steps, %d bytes in %d runs; replayed: %v", len(m.Steps), m.Size(), tries, res.Replayed)
		t.Reset(ctx)
		break
	}
	res.Took = time.Since(start)
	return res, ctx.Err()
}

// Replay sends an input to a node and says what the detectors saw.
func Replay(ctx context.Context, t *Target, in Input) (*Finding, error) {
	if err := t.Reset(ctx); err != nil {
		return nil, err
	}
	return t.Run(ctx, in)
}

package peerfuzz

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/harp-project/harp/harness/core/obs"
)

// Bounds of a run's options.
const (
	MinDuration      = time.Second
	MaxDuration      = 24 * time.Hour
	MaxMinimizeTries = 1000
)

// Options of a fuzz run.
type Options struct {
	Seed          int64
	Duration      time.Duration
	MinimizeTries int // runs the minimizer may spend (0: 40)
	Progress      func(format string, args ...any)
}

// Check says what is wrong with options given on the command line.
func (o Options) Check() error {
	if o.Duration < MinDuration || o.Duration > MaxDuration {
		return fmt.Errorf("--duration %s: want %s to %s", o.Duration, MinDuration, MaxDuration)
	}
	if o.MinimizeTries < 1 || o.MinimizeTries > MaxMinimizeTries {
		return fmt.Errorf("--minimize-tries %d: want 1 to %d", o.MinimizeTries, MaxMinimizeTries)
	}
	return nil
}

// Result is what a fuzz run did and found.
type Result struct {
	Seed    int64         `json:"seed"`
	Inputs  int           `json:"inputs"`
	Bytes   int           `json:"bytes"`
	Took    time.Duration `json:"took_ns"`
	Finding *Finding      `json:"finding,omitempty"`
	Input   *Input        `json:"input,omitempty"` // what triggered the finding
	// Alone says whether the triggering input, sent alone to a fresh
	// node, triggers it again (false: the finding needed what came
	// before; it is kept, not minimized). Unknown when harp could not
	// make the fresh node, the run, or was interrupted.
	Alone     obs.Optional[bool] `json:"alone"`
	Minimized *Input             `json:"minimized,omitempty"`
	Tries     int                `json:"minimize_tries,omitempty"`
	// Replayed says whether the minimized input triggered it once more,
	// on a fresh node, after minimizing.
	Replayed    obs.Optional[bool] `json:"replayed"`
	Interrupted bool               `json:"interrupted,omitempty"`
	Error       string             `json:"error,omitempty"` // harp's failure that ended the run
}

// Outcome is the run's exit status and what it says: 1 a finding (seen
// again alone on a fresh node, or resting on HAProxy's own words and
// needing what came before), 2 a finding seen once that a fresh node did
// not confirm or could not be asked, 0 nothing found, 3 harp could not do
// its work or was interrupted before it knew.
func (r Result) Outcome() (code int, says string) {
	if r.Finding == nil {
		switch {
		case r.Interrupted:
			return 3, fmt.Sprintf("interrupted after %d inputs, nothing found", r.Inputs)
		case r.Error != "":
			return 3, r.Error
		case r.Inputs == 0:
			return 3, "no input was sent"
		}
		return 0, fmt.Sprintf("nothing found in %d inputs", r.Inputs)
	}
	alone, ok := r.Alone.Get()
	switch {
	case ok && alone:
		s := "FOUND"
		if r.Interrupted {
			s += " (interrupted while minimizing)"
		}
		return 1, s
	case ok && r.Finding.Firm():
		return 1, "FOUND (it needed what came before: alone on a fresh node it did not trigger)"
	case ok:
		return 2, "UNCONFIRMED (seen once; alone on a fresh node it did not trigger, and harp could not reach the node rather than HAProxy saying so)"
	case r.Interrupted:
		return 3, "interrupted before the finding was confirmed (UNCONFIRMED)"
	}
	return 2, "UNCONFIRMED (harp could not confirm it on a fresh node: " + r.Alone.Unknown() + ")"
}

// Fuzz sends generated inputs, each after a control of the node, until
// one triggers a detector, the time is up, or harp is interrupted. A
// finding is then sent alone to a fresh node, minimized and replayed,
// each run on a fresh node.
func Fuzz(ctx context.Context, t *Target, o Options) (res Result) {
	res = Result{Seed: o.Seed}
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
	defer func() {
		res.Took = time.Since(start)
		res.Interrupted = res.Interrupted || ctx.Err() != nil
	}()
	stop := func(err error) Result {
		if errors.Is(err, ErrInterrupted) || ctx.Err() != nil {
			res.Interrupted = true
		} else {
			res.Error = err.Error()
		}
		return res
	}
	if err := t.Fresh(ctx); err != nil {
		return stop(err)
	}
	var prev *Input
	for n := 0; n == 0 || time.Now().Before(deadline); n++ {
		if ctx.Err() != nil {
			return stop(interrupted(ctx))
		}
		h, err := t.Control(ctx)
		if err != nil && prev == nil {
			return stop(fmt.Errorf("harp could not check the node before any input: %w", err))
		}
		if err != nil {
			return stop(err)
		}
		if h.Sick != nil {
			if prev == nil {
				return stop(fmt.Errorf("the node was not healthy before any input: %s", h.Sick))
			}
			// The input before left it so after its detectors looked.
			f := *h.Sick
			f.Delayed = true
			res.Finding, res.Input = &f, prev
			say("fuzz: before input %d: %s: a finding of input %d (seed %d)", n, f, prev.N, o.Seed)
			confirm(ctx, t, &res, o, say)
			return res
		}
		in := Generate(o.Seed, n)
		f, err := t.Run(ctx, in, h)
		if err != nil {
			return stop(fmt.Errorf("input %d: %w", n, err))
		}
		res.Inputs, res.Bytes = res.Inputs+1, res.Bytes+in.Size()
		if time.Since(last) >= 10*time.Second {
			last = time.Now()
			say("fuzz: %d inputs (%d bytes), no finding yet, %s left", res.Inputs, res.Bytes, time.Until(deadline).Round(time.Second))
		}
		if f != nil {
			res.Finding, res.Input = f, &in
			say("fuzz: input %d (seed %d): %s", n, o.Seed, f)
			confirm(ctx, t, &res, o, say)
			return res
		}
		prev = &in
	}
	return res
}

// confirm sends the finding's input alone to a fresh node, minimizes it
// and replays the result, each run on a fresh node.
func confirm(ctx context.Context, t *Target, res *Result, o Options, say func(string, ...any)) {
	want := res.Finding
	why := ""
	still := func(c Input) (yes, ok bool) {
		g := OnFresh(ctx, t, c, want.Delayed)
		f, ok := g.Get()
		if !ok {
			why = g.Unknown()
			return false, false
		}
		return Same(f, want), true
	}
	in := *res.Input
	alone, ok := still(in)
	if !ok {
		res.Alone = obs.Optional[bool]{Of: obs.Failure[bool]("%s", why)}
		say("fuzz: input %d could not be sent alone to a fresh node: %s: the finding is unconfirmed", in.N, why)
		return
	}
	res.Alone = obs.Optional[bool]{Of: obs.Value(alone)}
	if !alone {
		say("fuzz: input %d alone on a fresh node does not trigger it: it needed what came before", in.N)
		return
	}
	say("fuzz: minimizing input %d (%d steps, %d bytes; at most %d runs)", in.N, len(in.Steps), in.Size(), o.MinimizeTries)
	m, tries, done := Minimize(in, still, o.MinimizeTries)
	res.Minimized, res.Tries = &m, tries
	if !done {
		say("fuzz: the minimizer stopped after %d runs: %s (what it kept triggered each time)", tries, why)
		if ctx.Err() != nil {
			return
		}
	}
	r, ok := still(m)
	if ok {
		res.Replayed = obs.Optional[bool]{Of: obs.Value(r)}
	} else {
		res.Replayed = obs.Optional[bool]{Of: obs.Failure[bool]("%s", why)}
	}
	say("fuzz: minimized to %d steps, %d bytes in %d runs; replayed: %s", len(m.Steps), m.Size(), tries, show(res.Replayed.Of))
}

func show(o obs.Of[bool]) string {
	if v, ok := o.Get(); ok {
		return fmt.Sprint(v)
	}
	return "unknown (" + o.Unknown() + ")"
}

// OnFresh sends an input to a fresh node that passed a control first, and
// says what the detectors saw (nil: nothing); with watch, a node that saw
// nothing at once is watched a while (a death after the detectors
// looked). Unknown when harp could not make the node healthy, send, or
// was interrupted.
func OnFresh(ctx context.Context, t *Target, in Input, watch bool) obs.Of[*Finding] {
	unknown := func(what string, err error) obs.Of[*Finding] {
		if ctx.Err() != nil {
			err = interrupted(ctx)
		}
		return obs.Failure[*Finding]("%s: %v", what, err)
	}
	if err := t.Fresh(ctx); err != nil {
		return unknown("a fresh node", err)
	}
	h, err := t.Control(ctx)
	if err != nil {
		return unknown("the fresh node's control", err)
	}
	if h.Sick != nil {
		return obs.Failure[*Finding]("the fresh node was not healthy before the input: %s", h.Sick)
	}
	f, err := t.Run(ctx, in, h)
	if err != nil {
		return unknown("the input", err)
	}
	tm := t.Timing.with()
	for until := time.Now().Add(tm.Watch); f == nil && watch && time.Now().Before(until); {
		select {
		case <-time.After(tm.Sample):
		case <-ctx.Done():
			return unknown("watching the node", ctx.Err())
		}
		h, err := t.Control(ctx)
		if err != nil {
			return unknown("watching the node", err)
		}
		if h.Sick != nil {
			g := *h.Sick
			g.Delayed = true
			f = &g
		}
	}
	return obs.Value(f)
}

// Replay sends an input to a fresh node and says what the detectors saw,
// watching the node a while after them. The error is harp's, or the
// interrupt (ErrInterrupted): never a finding.
func Replay(ctx context.Context, t *Target, in Input) (*Finding, error) {
	g := OnFresh(ctx, t, in, true)
	if ctx.Err() != nil {
		return nil, interrupted(ctx)
	}
	f, ok := g.Get()
	if !ok {
		return nil, errors.New(g.Unknown())
	}
	return f, nil
}

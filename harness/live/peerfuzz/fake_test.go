package peerfuzz

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/harp-project/harp/harness/core/cliout"
)

// fakeNode plays HAProxy for the target: what an input does to it is
// effect's; a restart makes it healthy again.
type fakeNode struct {
	mu        sync.Mutex
	running   bool
	logs      string
	idle      float64
	pool      float64
	stuck     bool          // show info never answers
	latency   time.Duration // what each show info takes
	portGone  bool
	vanishAt  time.Time // the node stops then (a delayed death)
	vanishOn  bool      // the node has stopped when harp next asks for its port
	spinAt    time.Time // the worker spins from then on
	inspect   error     // Running fails (Docker)
	restarts  int
	onRestart func(f *fakeNode) error // may fail it, or cancel the run
	healthy   func(f *fakeNode)       // what a restart gives (default: all well)
	effect    func(f *fakeNode, in Input)
	send      func(ctx context.Context, in Input) error // default: the steps' pauses
	dirty     bool                                      // an input was sent since the last restart
	log       []string                                  // "restart", "send:<fresh|dirty>:<steps>"
}

func newFake(effect func(f *fakeNode, in Input)) *fakeNode {
	f := &fakeNode{effect: effect}
	f.reset()
	return f
}

func (f *fakeNode) reset() {
	f.running, f.idle, f.pool, f.stuck, f.portGone = true, 98, 10, false, false
	f.vanishAt, f.spinAt, f.vanishOn = time.Time{}, time.Time{}, false
	if f.healthy != nil {
		f.healthy(f)
	}
}

func (f *fakeNode) tick() {
	if !f.vanishAt.IsZero() && time.Now().After(f.vanishAt) {
		f.running, f.vanishAt = false, time.Time{}
		f.logs += "[ALERT] (1) : Current worker (8) exited with code 134 (Aborted)\n"
	}
	if !f.spinAt.IsZero() && time.Now().After(f.spinAt) {
		f.idle = 3
	}
}

func (f *fakeNode) Addr(ctx context.Context, port string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.vanishOn {
		f.vanishAt, f.vanishOn = time.Now(), false
	}
	f.tick()
	if !f.running || f.portGone {
		return "", fmt.Errorf("port %q not found", port)
	}
	return "127.0.0.1:1", nil
}

func (f *fakeNode) Logs(ctx context.Context) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tick()
	if ctx.Err() != nil {
		return "", ctx.Err()
	}
	return f.logs, nil
}

func (f *fakeNode) Info(ctx context.Context, pid int) (cliout.Info, error) {
	f.mu.Lock()
	f.tick()
	running, stuck, lat := f.running, f.stuck, f.latency
	info := cliout.Info{"Idle_pct": fmt.Sprint(f.idle), "PoolUsed_MB": fmt.Sprint(f.pool)}
	f.mu.Unlock()
	if ctx.Err() != nil { // as a real dial does
		return nil, fmt.Errorf("show info: dial: %w", ctx.Err())
	}
	if !running {
		return nil, errors.New("show info: connection refused")
	}
	if stuck {
		<-ctx.Done()
		return nil, fmt.Errorf("show info: %w", ctx.Err())
	}
	select {
	case <-time.After(lat):
	case <-ctx.Done():
		return nil, fmt.Errorf("show info: %w", ctx.Err())
	}
	return info, nil
}

func (f *fakeNode) Running(ctx context.Context) (bool, int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tick()
	if f.inspect != nil {
		return false, 0, f.inspect
	}
	if ctx.Err() != nil {
		return false, 0, ctx.Err()
	}
	return f.running, 0, nil
}

func (f *fakeNode) Restart(ctx context.Context, timeout time.Duration) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.restarts++
	f.log = append(f.log, "restart")
	if f.onRestart != nil {
		if err := f.onRestart(f); err != nil {
			return err
		}
	}
	f.reset()
	f.dirty = false
	return nil
}

// sendHook is the target's peer connection: it records the input, lets
// effect act, and sleeps the pauses (until the run is cancelled).
func (f *fakeNode) sendHook(ctx context.Context, addr string, in Input) error {
	f.mu.Lock()
	state := "fresh"
	if f.dirty {
		state = "dirty"
	}
	f.dirty = true
	f.log = append(f.log, fmt.Sprintf("send:%s:%d", state, len(in.Steps)))
	send := f.send
	f.mu.Unlock()
	if send != nil {
		if err := send(ctx, in); err != nil {
			return err
		}
	} else {
		for _, s := range in.Steps {
			select {
			case <-time.After(time.Duration(s.PauseMS) * time.Millisecond):
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	f.mu.Lock()
	if f.effect != nil {
		f.effect(f, in)
	}
	f.mu.Unlock()
	return nil
}

func (f *fakeNode) events() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.log...)
}

// fakeTarget is a target on f with short timings.
func fakeTarget(f *fakeNode) *Target {
	return &Target{Node: f, send: f.sendHook, Timing: Timing{Stuck: 100 * time.Millisecond, Window: 300 * time.Millisecond, Watch: 200 * time.Millisecond, Silence: 20 * time.Millisecond,
		FinWait: 10 * time.Millisecond, Sample: 20 * time.Millisecond, Fate: 50 * time.Millisecond}}
}

// has says whether in holds a step whose What starts with prefix.
func has(in Input, prefix string) bool {
	for _, s := range in.Steps {
		if strings.HasPrefix(s.What, prefix) {
			return true
		}
	}
	return false
}

// firstWith is the first input of the run seeded seed that holds a step
// starting with prefix, among at least min steps.
func firstWith(seed int64, prefix string, min int) (int, Input) {
	for n := 0; ; n++ {
		in := Generate(seed, n)
		if has(in, prefix) && len(in.Steps) >= min {
			return n, in
		}
	}
}

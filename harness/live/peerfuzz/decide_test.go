package peerfuzz

import (
	"bufio"
	"context"
	"errors"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/harp-project/harp/harness/core/obs"
)

// spinSeed is a seed whose first input holding a cut ack has other steps
// around it: a minimizer that runs on the damaged node keeps the wrong one.
func spinSeed(t *testing.T) (int64, int, Input) {
	for seed := int64(1); seed < 500; seed++ {
		n, in := firstWith(seed, "ack cut", 1)
		if len(in.Steps) >= 5 && !strings.HasPrefix(in.Steps[0].What, "ack cut") {
			return seed, n, in
		}
	}
	t.Fatal("no seed")
	return 0, 0, Input{}
}

// #23, 1: a spin leaves the worker running. Every confirmation, minimizer
// try and replay starts from a fresh node, so the minimized input is the
// cut ack, not whatever came first.
func TestConfirmationsRunOnFreshNodes(t *testing.T) {
	seed, n, _ := spinSeed(t)
	f := newFake(func(f *fakeNode, in Input) {
		if has(in, "ack cut") {
			f.idle = 3 // spins until restarted
		}
	})
	res := Fuzz(context.Background(), fakeTarget(f), Options{Seed: seed, Duration: time.Minute, MinimizeTries: 40})
	if res.Finding == nil || res.Finding.Detector != "spinning" || res.Input.N != n {
		t.Fatalf("finding %v on input %v, want spinning on input %d", res.Finding, res.Input, n)
	}
	if res.Minimized == nil || len(res.Minimized.Steps) != 1 || !has(*res.Minimized, "ack cut") {
		t.Fatalf("minimized to %v, want the cut ack alone", res.Minimized)
	}
	// After the finding (send n+1), every input went to a node nothing
	// had been sent to since its restart.
	ev := f.events()
	sends := 0
	for i, e := range ev {
		if !strings.HasPrefix(e, "send:") {
			continue
		}
		if sends++; sends > n+1 && !strings.HasPrefix(e, "send:fresh:") {
			t.Fatalf("event %d: %s after the finding (events %v)", i, e, ev)
		}
	}
	if sends <= n+2 {
		t.Fatalf("no confirmation was sent: %v", ev)
	}
}

// #23, 4: the node dies shortly after an input (after the detectors
// looked, before the next input): the next input finds its port gone. That is a finding of the
// input before, confirmed on a fresh node, never harp's error.
func TestVanishedNodeIsAFinding(t *testing.T) {
	seed, n, _ := spinSeed(t)
	f := newFake(func(f *fakeNode, in Input) {
		if has(in, "ack cut") {
			f.vanishOn = true // gone by the time harp looks again
		}
	})
	res := Fuzz(context.Background(), fakeTarget(f), Options{Seed: seed, Duration: time.Minute, MinimizeTries: 10})
	err := res.Error
	if err != "" || res.Finding == nil || res.Input == nil || res.Input.N != n {
		t.Fatalf("err %v, finding %v, input %+v: want a finding of input %d", err, res.Finding, res.Input, n)
	}
	if !Same(res.Finding, &Finding{Detector: "exit"}) {
		t.Errorf("finding %v: want a stopped worker", res.Finding)
	}
}

// #29: a replay interrupted while it sends is no finding: the detectors
// never read the interrupt as a dead CLI.
func TestReplayInterruptedIsNoFinding(t *testing.T) {
	f := newFake(nil)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	in := Input{Seed: 1, N: 1, Steps: []Step{{What: "x", Hex: "0001", PauseMS: 20000}}, End: EndFIN}
	got, err := Replay(ctx, fakeTarget(f), in)
	if got != nil || !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted replay: finding %v, err %v; want no finding and the interrupt", got, err)
	}
}

// #29: an interrupted fuzz run logs no detector.
func TestFuzzInterruptIsNoFinding(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := newFake(nil)
	sent := 0
	f.send = func(c context.Context, in Input) error {
		if sent++; sent == 3 {
			cancel()
			<-c.Done()
			return c.Err()
		}
		return nil
	}
	res := Fuzz(ctx, fakeTarget(f), Options{Seed: 3, Duration: time.Minute})
	if res.Finding != nil {
		t.Fatalf("an interrupt became a finding: %v", res.Finding)
	}
}

// #23, 3: an input ending in silence is judged after the detectors'
// window: a spin that starts after the connection ends is seen.
func TestSilenceEndWaitsForTheSpin(t *testing.T) {
	f := newFake(func(f *fakeNode, in Input) { f.spinAt = time.Now().Add(80 * time.Millisecond) })
	in := Input{Steps: []Step{{What: "ack cut to 1 bytes", Hex: "0a8401"}}, End: EndSilence}
	got, err := Replay(context.Background(), fakeTarget(f), in)
	if err != nil || got == nil || got.Detector != "spinning" {
		t.Fatalf("finding %v, err %v: want the spin", got, err)
	}
}

// #23, 2: a CLI slower than the old 3 s bound (here 100 ms, the fake's
// show info taking 150 ms, then 1 s after the input) is slow, not stuck:
// the bound is generous and many times the control's latency.
func TestSlowCLIIsNotStuck(t *testing.T) {
	f := newFake(func(f *fakeNode, in Input) { f.latency = time.Second })
	f.latency = 150 * time.Millisecond
	in := Input{Steps: []Step{{What: "ack", Hex: "0a8401"}}, End: EndFIN}
	tg := fakeTarget(f)
	tg.Timing.Stuck = 200 * time.Millisecond
	got, err := Replay(context.Background(), tg, in)
	if err != nil || got != nil {
		t.Fatalf("slow CLI: finding %v, err %v; want nothing", got, err)
	}
}

// #29: inputs are bounded when read, with an error naming the bound.
func TestLoadBounds(t *testing.T) {
	dir := t.TempDir()
	write := func(in Input) string {
		p := filepath.Join(dir, "in.json")
		if err := in.Save(p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	many := Input{End: EndFIN, Steps: make([]Step, 2000)}
	for i := range many.Steps {
		many.Steps[i] = Step{What: "x", Hex: "0001"}
	}
	wide := Input{End: EndFIN}
	for i := 0; i < 20; i++ {
		wide.Steps = append(wide.Steps, Step{Hex: strings.Repeat("00", 60000)})
	}
	for _, c := range []struct {
		in   Input
		want string
	}{
		{many, "steps"},
		{Input{End: EndFIN, Steps: []Step{{Hex: strings.Repeat("00", 1<<20)}}}, "bytes"},
		{wide, "bytes in all"},
		{Input{End: EndFIN, Steps: []Step{{Hex: "00", PauseMS: 10 * 60 * 1000}}}, "pause"},
		{Input{End: EndFIN, Steps: []Step{{Hex: "00", PauseMS: 30000}, {Hex: "00", PauseMS: 30000}, {Hex: "00", PauseMS: 30000}, {Hex: "00", PauseMS: 30000}, {Hex: "00", PauseMS: 30000}}}, "pauses"},
		{Input{End: EndFIN, Steps: []Step{{Hex: "00", PauseMS: -1}}}, "pause"},
		{Input{End: EndFIN, Steps: []Step{{Hex: "0000", Split: []int{0}}}}, "split"},
	} {
		_, err := Load(write(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "at most") && c.want != "split" && !strings.Contains(err.Error(), "negative") {
			t.Errorf("want an error naming %s, got %v", c.want, err)
		}
	}
	// #29's pause20.json is a fair input.
	if _, err := Load(write(Input{Seed: 1, N: 1, Steps: []Step{{What: "x", Hex: "0001", PauseMS: 20000}}, End: EndFIN})); err != nil {
		t.Errorf("pause20.json: %v", err)
	}
	// #29's million steps: a 38 MB file, refused before it is parsed.
	huge := Input{End: EndFIN, Steps: make([]Step, 1_000_000)}
	for i := range huge.Steps {
		huge.Steps[i] = Step{What: "x", Hex: "0001"}
	}
	if _, err := Load(write(huge)); err == nil || !strings.Contains(err.Error(), "at most") {
		t.Errorf("a million steps: %v", err)
	}
}

// peerListener answers harp's handshake with 200, then reads (or not).
func peerListener(t *testing.T, read bool) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for i := 0; i < 3; i++ {
					if _, err := br.ReadString('\n'); err != nil {
						return
					}
				}
				c.Write([]byte("200\n"))
				if read {
					buf := make([]byte, 1<<16)
					for {
						if _, err := br.Read(buf); err != nil {
							return
						}
					}
				}
				time.Sleep(time.Minute)
			}()
		}
	}()
	return l.Addr().String()
}

// #29: the step loop checks for cancellation, also when HAProxy stops
// reading and a write blocks.
func TestSendStopsWhenCancelled(t *testing.T) {
	many := Input{End: EndFIN, Steps: make([]Step, 1_000_000)}
	for i := range many.Steps {
		many.Steps[i] = Step{What: "x", Hex: "0001"}
	}
	wide := Input{End: EndFIN}
	for i := 0; i < 400; i++ {
		wide.Steps = append(wide.Steps, Step{What: "x", Hex: strings.Repeat("ab", 1<<16)})
	}
	for _, c := range []struct {
		name string
		in   Input
		read bool
	}{{"a million steps", many, true}, {"a peer that stops reading", wide, false}} {
		addr := peerListener(t, c.read)
		ctx, cancel := context.WithCancel(context.Background())
		tg := &Target{}
		done := make(chan error, 1)
		go func() { done <- tg.sendPeer(ctx, addr, c.in) }()
		time.Sleep(200 * time.Millisecond)
		cancel()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("%s: cancelled send returned %v", c.name, err)
			}
		case <-time.After(3 * time.Second):
			t.Errorf("%s: the send goes on 3 s after the interrupt", c.name)
		}
	}
}

// What a run says, by what it saw and could confirm.
func TestOutcome(t *testing.T) {
	yes, no := obs.Optional[bool]{Of: obs.Value(true)}, obs.Optional[bool]{Of: obs.Value(false)}
	unknown := obs.Optional[bool]{Of: obs.Failure[bool]("a fresh node: docker: restart failed")}
	crash, cli := &Finding{Detector: "crash"}, &Finding{Detector: "cli"}
	for _, c := range []struct {
		name string
		r    Result
		code int
		says string
	}{
		{"nothing", Result{Inputs: 5}, 0, "nothing found in 5 inputs"},
		{"no input", Result{}, 3, "no input"},
		{"harp failed", Result{Inputs: 5, Error: "input 5: peer port: refused"}, 3, "peer port"},
		{"interrupted", Result{Inputs: 5, Interrupted: true}, 3, "interrupted after 5 inputs"},
		{"confirmed", Result{Finding: crash, Alone: yes}, 1, "FOUND"},
		{"confirmed, minimizing interrupted", Result{Finding: crash, Alone: yes, Interrupted: true}, 1, "FOUND (interrupted"},
		{"a crash that needed what came before", Result{Finding: crash, Alone: no}, 1, "needed what came before"},
		{"a silent CLI a fresh node did not repeat", Result{Finding: cli, Alone: no}, 2, "UNCONFIRMED"},
		{"confirmation failed", Result{Finding: crash, Alone: unknown}, 2, "UNCONFIRMED (harp could not confirm it on a fresh node: a fresh node: docker"},
		{"confirmation interrupted", Result{Finding: crash, Alone: unknown, Interrupted: true}, 3, "interrupted before the finding was confirmed"},
	} {
		code, says := c.r.Outcome()
		if code != c.code || !strings.Contains(says, c.says) {
			t.Errorf("%s: %d %q, want %d %q", c.name, code, says, c.code, c.says)
		}
	}
}

// #23, 1: a fresh node that is not healthy (here it spins from the start)
// confirms nothing: the finding is unconfirmed, not found.
func TestUnhealthyFreshNodeConfirmsNothing(t *testing.T) {
	seed, _, _ := spinSeed(t)
	f := newFake(func(f *fakeNode, in Input) {
		if has(in, "ack cut") {
			f.idle = 3
		}
	})
	f.healthy = func(f *fakeNode) {
		if f.restarts > 0 {
			f.idle = 3
		}
	}
	res := Fuzz(context.Background(), fakeTarget(f), Options{Seed: seed, Duration: time.Minute})
	code, says := res.Outcome()
	if res.Finding == nil || code != 2 || !strings.Contains(says, "not healthy") {
		t.Fatalf("finding %v: %d %s; want it unconfirmed, the fresh node not healthy", res.Finding, code, says)
	}
}

// #23, 2: a CLI that stops answering after an input is a finding when a
// fresh node agrees, and unconfirmed when it does not.
func TestStuckCLIConfirmedOnFreshNode(t *testing.T) {
	seed, n, _ := spinSeed(t)
	for _, c := range []struct {
		times int // how many times the cut ack makes the CLI stuck
		code  int
	}{{100, 1}, {1, 2}} {
		k := 0
		f := newFake(func(f *fakeNode, in Input) {
			if has(in, "ack cut") {
				if k++; k <= c.times {
					f.stuck = true
				}
			}
		})
		res := Fuzz(context.Background(), fakeTarget(f), Options{Seed: seed, Duration: time.Minute, MinimizeTries: 5})
		code, says := res.Outcome()
		if res.Finding == nil || res.Finding.Detector != "cli" || res.Input.N != n || code != c.code {
			t.Errorf("stuck %d times: %v on %v: %d %s; want cli on input %d, exit %d", c.times, res.Finding, res.Input, code, says, n, c.code)
		}
	}
}

// #23, 3: an abort while the finding is confirmed keeps the finding,
// unconfirmed: an interrupt says so (exit 3), harp's failure gives 2.
func TestAbortDuringConfirmation(t *testing.T) {
	seed, n, _ := spinSeed(t)
	for _, c := range []struct {
		name      string
		interrupt bool
		code      int
		says      string
	}{{"interrupt", true, 3, "interrupted before the finding was confirmed"}, {"docker", false, 2, "restart failed"}} {
		ctx, cancel := context.WithCancel(context.Background())
		f := newFake(func(f *fakeNode, in Input) {
			if has(in, "ack cut") {
				f.idle = 3
			}
		})
		f.onRestart = func(f *fakeNode) error {
			if c.interrupt {
				cancel()
				return context.Canceled
			}
			return errors.New("docker: restart failed")
		}
		res := Fuzz(ctx, fakeTarget(f), Options{Seed: seed, Duration: time.Minute})
		cancel()
		code, says := res.Outcome()
		if res.Finding == nil || res.Finding.Detector != "spinning" || res.Input.N != n || code != c.code || !strings.Contains(says, c.says) {
			t.Errorf("%s: %v on %v: %d %s; want the spin kept, exit %d %q", c.name, res.Finding, res.Input, code, says, c.code, c.says)
		}
		if _, ok := res.Alone.Get(); ok {
			t.Errorf("%s: alone %+v, want unknown", c.name, res.Alone)
		}
	}
}

// #23, 4: harp's own Docker failure before any input is an error, no
// finding.
func TestDockerFailureBeforeAnyInput(t *testing.T) {
	f := newFake(nil)
	f.inspect = errors.New("Cannot connect to the Docker daemon")
	res := Fuzz(context.Background(), fakeTarget(f), Options{Seed: 1, Duration: time.Minute})
	code, says := res.Outcome()
	if res.Finding != nil || code != 3 || !strings.Contains(says, "before any input") || !strings.Contains(says, "Docker daemon") {
		t.Fatalf("%v: %d %s; want harp's error", res.Finding, code, says)
	}
}

// #23, 4: the vanished node's finding is confirmed on a fresh node, which
// is watched after the input.
func TestVanishedNodeConfirmed(t *testing.T) {
	seed, _, _ := spinSeed(t)
	f := newFake(func(f *fakeNode, in Input) {
		if has(in, "ack cut") {
			f.vanishOn = true
		}
	})
	res := Fuzz(context.Background(), fakeTarget(f), Options{Seed: seed, Duration: time.Minute, MinimizeTries: 10})
	code, says := res.Outcome()
	if alone, ok := res.Alone.Get(); !ok || !alone || code != 1 || !res.Finding.Delayed {
		t.Fatalf("alone %+v, %d %s, %+v: want confirmed", res.Alone, code, says, res.Finding)
	}
	if res.Minimized == nil || len(res.Minimized.Steps) != 1 || !has(*res.Minimized, "ack cut") {
		t.Errorf("minimized to %v", res.Minimized)
	}
}

// #29: an interrupted fuzz run says interrupted, exit 3.
func TestFuzzInterruptSaysInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := newFake(nil)
	sent := 0
	f.send = func(c context.Context, in Input) error {
		if sent++; sent == 3 {
			cancel()
		}
		return nil
	}
	res := Fuzz(ctx, fakeTarget(f), Options{Seed: 3, Duration: time.Minute})
	if code, says := res.Outcome(); res.Finding != nil || code != 3 || !strings.Contains(says, "interrupted") || res.Took == 0 {
		t.Fatalf("%v: %d %s", res.Finding, code, says)
	}
}

// #29: the run's options are bounded, with an error naming the flag.
func TestOptionsCheck(t *testing.T) {
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{Duration: time.Minute, MinimizeTries: -1}, "--minimize-tries -1"},
		{Options{Duration: time.Minute, MinimizeTries: 0}, "--minimize-tries 0"},
		{Options{Duration: time.Minute, MinimizeTries: 1_000_000}, "--minimize-tries 1000000"},
		{Options{Duration: time.Millisecond, MinimizeTries: 40}, "--duration 1ms"},
		{Options{Duration: 25 * time.Hour, MinimizeTries: 40}, "--duration 25h"},
	} {
		if err := c.o.Check(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %s", c.o, err, c.want)
		}
	}
	if err := (Options{Duration: 10 * time.Minute, MinimizeTries: 40}).Check(); err != nil {
		t.Error(err)
	}
}

// #23, 2: the stuck bound is generous, longer on a slow machine, bounded.
func TestStuckBound(t *testing.T) {
	tm := Timing{}.with()
	for _, c := range []struct{ control, want time.Duration }{
		{time.Millisecond, 15 * time.Second}, {2 * time.Second, 40 * time.Second}, {10 * time.Second, time.Minute},
	} {
		if got := tm.stuckBound(c.control); got != c.want {
			t.Errorf("control %s: bound %s, want %s", c.control, got, c.want)
		}
	}
}

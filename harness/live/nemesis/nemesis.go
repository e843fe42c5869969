// Package nemesis injects faults into harp's own side, never HAProxy's:
// runtime-CLI exchanges that time out, close early or answer seconds late,
// raw exchanges harp ends early, cuts or reads late, dials that fail,
// reads to a close harp ends itself, peers sessions harp stalls or ends,
// slow Docker calls, failing toxiproxy API calls, failed HTTP probe
// requests, and a starved CPU. It proves that harp's faults do not bend
// verdicts: a build without a suite's bug must never be REPRODUCED under
// it, a build with the bug never PASS. Off unless Enable is called
// (harp --harness-faults SEED, or HARP_HARNESS_FAULTS); every fault is
// recorded, for the evidence. Its CLI faults stand for commands that never
// reached HAProxy (cli.ErrNotSent). It depends on the standard library and
// harness/live/cli and harness/core/record only.
package nemesis

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/harp-project/harp/harness/core/record"
	"github.com/harp-project/harp/harness/live/cli"
)

// ErrInjected marks every error the nemesis makes.
var ErrInjected = errors.New("harness fault injected by the nemesis")

type state struct {
	seed   int64
	mu     sync.Mutex
	rng    *rand.Rand
	faults []record.HarnessFault
	stop   chan struct{}
}

var on atomic.Pointer[state]

// Env is the environment variable that enables the nemesis with a seed.
const Env = "HARP_HARNESS_FAULTS"

// FromEnv enables the nemesis when HARP_HARNESS_FAULTS holds a seed; an
// unreadable value is an error (never a silent run without faults).
func FromEnv() (bool, error) {
	v := os.Getenv(Env)
	if v == "" {
		return false, nil
	}
	seed, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return false, fmt.Errorf("%s=%q: want an integer seed", Env, v)
	}
	Enable(seed)
	return true, nil
}

// Enable turns the nemesis on with a seed (and the CPU starver).
func Enable(seed int64) {
	s := &state{seed: seed, rng: rand.New(rand.NewSource(seed)), stop: make(chan struct{})}
	if old := on.Swap(s); old != nil {
		close(old.stop)
	}
	cli.Fault, cli.SendFault = s.exchange, s.peerSend
	go s.starve()
}

// Disable turns it off (tests).
func Disable() {
	if old := on.Swap(nil); old != nil {
		close(old.stop)
	}
	cli.Fault, cli.SendFault = nil, nil
}

// Seed is the seed in force, and whether the nemesis is on.
func Seed() (int64, bool) {
	s := on.Load()
	if s == nil {
		return 0, false
	}
	return s.seed, true
}

// Faults are the faults injected so far.
func Faults() []record.HarnessFault {
	s := on.Load()
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]record.HarnessFault(nil), s.faults...)
}

// Since are the faults injected from mark on (see Mark), and one injected
// before it that still lasted then (a starved CPU that began before a
// trial starved the trial too).
func Since(mark Marker) []record.HarnessFault {
	fs := Faults()
	if mark.n > len(fs) {
		return nil
	}
	var lasting []record.HarnessFault
	for _, f := range fs[:mark.n] {
		if f.Until.After(mark.at) {
			lasting = append(lasting, f)
		}
	}
	return append(lasting, fs[mark.n:]...)
}

// Marker is where Mark was: how many faults there were, and when.
type Marker struct {
	n  int
	at time.Time
}

// Mark is the number of faults injected so far, and the time.
func Mark() Marker { return Marker{len(Faults()), time.Now()} }

// draw says whether a fault of probability p happens, with a number in
// [0,1) to pick its kind or size.
func (s *state) draw(p float64) (bool, float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rng.Float64() < p, s.rng.Float64()
}

func (s *state) record(kind, target, detail string) { s.lasting(kind, target, detail, 0) }

// lasting records a fault that lasts d from now.
func (s *state) lasting(kind, target, detail string, d time.Duration) {
	now := time.Now()
	f := record.HarnessFault{At: now, Kind: kind, Target: target, Detail: detail}
	if d > 0 {
		f.Until = now.Add(d)
	}
	s.mu.Lock()
	s.faults = append(s.faults, f)
	s.mu.Unlock()
}

// CLI wraps one runtime-CLI exchange: 4% of them time out (wait out the
// context's deadline, at most 3 s), 2% close before an answer, 2% of the
// reads are sent but their answer lost on harp's side (not
// cli.ErrNotSent: HAProxy ran them), and the rest answer 1 to 3 s late.
func CLI(ctx context.Context, target, cmd string, do func() (string, error)) (string, error) {
	s := on.Load()
	if s == nil {
		return do()
	}
	hit, r := s.draw(0.12)
	if !hit {
		return do()
	}
	switch {
	case r < 0.33:
		wait := 3 * time.Second
		if dl, ok := ctx.Deadline(); ok {
			wait = min(wait, time.Until(dl))
		}
		s.record("cli-timeout", target, cmd)
		cli.Sleep(ctx, wait)
		return "", fmt.Errorf("%s: %q: i/o timeout (%w; %w)", target, cmd, ErrInjected, cli.ErrNotSent)
	case r < 0.5:
		s.record("cli-close", target, cmd)
		return "", fmt.Errorf("%s: the connection closed without an answer to %q (%w; %w)", target, cmd, ErrInjected, cli.ErrNotSent)
	case r < 0.67 && isRead(cmd):
		// Sent, and its answer lost on harp's side: HAProxy ran the
		// command, so it must not be sent again as one never sent. Only
		// reads: a write whose outcome harp lost is a harness error
		// (ERROR, the run stops), never a verdict, and proves nothing
		// more here.
		s.record("cli-lost", target, cmd)
		do()
		return "", fmt.Errorf("%s: the answer to %q was lost on harp's side (%w)", target, cmd, ErrInjected)
	}
	d := time.Second + time.Duration(r*2*float64(time.Second))
	s.record("cli-late", target, fmt.Sprintf("%s, %s late", cmd, d.Round(time.Millisecond)))
	cli.Sleep(ctx, d)
	return do()
}

// exchange is cli.Fault: on raw exchanges 6% of them fail on harp's side
// (a third harp ending the connection before the answer, a third read 1
// to 3 s late, a third cut after the first bytes); 3% of dials fail; 5%
// of reads to a close end by harp's hand or look 1 to 2 s late.
func (s *state) exchange(_ context.Context, path, target string) cli.Injected {
	switch path {
	case "raw":
		hit, r := s.draw(0.06)
		switch {
		case !hit:
		case r < 0.33:
			s.record("raw-close", target, "harp closed before the answer")
			return cli.Injected{Err: ErrInjected}
		case r < 0.66:
			d := time.Second + time.Duration(r*2*float64(time.Second))
			s.record("raw-late", target, d.Round(time.Millisecond).String()+" late")
			return cli.Injected{Late: d}
		default:
			s.record("raw-cut", target, "harp stopped reading after the first bytes")
			return cli.Injected{Cut: true}
		}
	case "dial":
		if hit, _ := s.draw(0.03); hit {
			s.record("dial-fail", target, "")
			return cli.Injected{Err: ErrInjected}
		}
	case "read-to-close":
		hit, r := s.draw(0.05)
		switch {
		case !hit:
		case r < 0.5:
			s.record("read-end", target, "harp ended the read")
			return cli.Injected{Err: ErrInjected}
		default:
			d := time.Second + time.Duration(r*float64(time.Second))
			s.record("read-late", target, d.Round(time.Millisecond).String()+" late")
			return cli.Injected{Late: d}
		}
	}
	return cli.Injected{}
}

// peerSend is cli.SendFault (the peers client): 1.6% of sends stall 3 s (past the 2.5 s a
// case allows itself between messages), 0.4% end the session on harp's
// side.
func (s *state) peerSend(op string) (time.Duration, bool) {
	hit, r := s.draw(0.02)
	switch {
	case !hit:
		return 0, false
	case r < 0.2:
		s.record("peer-end", op, "harp ended the session")
		return 0, true
	}
	s.record("peer-stall", op, "3s")
	return 3 * time.Second, false
}

// isRead says whether a CLI command only reads (show ...), past a
// master CLI's @<pid> or @!<pid> prefix.
func isRead(cmd string) bool {
	cmd = strings.TrimSpace(cmd)
	if strings.HasPrefix(cmd, "@") {
		_, cmd, _ = strings.Cut(cmd, " ")
	}
	return strings.HasPrefix(strings.TrimSpace(cmd), "show ")
}

// Docker delays a Docker call: 10% of them by 0.5 to 2 s.
func Docker(ctx context.Context, call string) {
	s := on.Load()
	if s == nil {
		return
	}
	if hit, r := s.draw(0.10); hit {
		d := 500*time.Millisecond + time.Duration(r*1.5*float64(time.Second))
		s.record("docker-slow", call, d.Round(time.Millisecond).String())
		cli.Sleep(ctx, d)
	}
}

// Toxiproxy fails 10% of link-proxy API calls.
func Toxiproxy(call string) error {
	s := on.Load()
	if s == nil {
		return nil
	}
	if hit, _ := s.draw(0.10); hit {
		s.record("toxiproxy-fail", call, "")
		return fmt.Errorf("toxiproxy API %s: 500 Internal Server Error (%w)", call, ErrInjected)
	}
	return nil
}

// HTTP fails 5% of harp's single HTTP requests (probes, not load).
func HTTP(target string) error {
	s := on.Load()
	if s == nil {
		return nil
	}
	if hit, _ := s.draw(0.05); hit {
		s.record("http-fail", target, "")
		return fmt.Errorf("GET %s: connection reset by peer (%w)", target, ErrInjected)
	}
	return nil
}

// starve burns every CPU for 1.5 s out of every 10 s while on: harp's
// goroutines, HAProxy and Docker then compete for what is left.
func (s *state) starve() {
	t := time.NewTicker(10 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		s.lasting("cpu-starve", "harp", fmt.Sprintf("%d busy goroutines for 1.5s", runtime.NumCPU()), 1500*time.Millisecond)
		end := time.Now().Add(1500 * time.Millisecond)
		var wg sync.WaitGroup
		for range runtime.NumCPU() {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for x := 0; time.Now().Before(end); x++ {
					_ = x * x
				}
			}()
		}
		wg.Wait()
	}
}

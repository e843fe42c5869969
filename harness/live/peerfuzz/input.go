// Package peerfuzz fuzzes HAProxy's peer port: after a real handshake,
// harp's peer sends mutated message streams built from the protocol's
// structure (table definitions, updates, acks, switches, control and
// error messages; truncated messages, huge and malformed varints, unknown
// table ids, wrong key types and lengths, messages split across segments,
// out-of-order sequences), and detectors watch the node: a worker that
// exits or crashes, watchdog warnings, a worker that spins while the input
// is idle, a CLI that stops answering, memory that keeps growing. A
// finding is kept as a replayable input and minimized to the shortest
// message sequence that still triggers it. Inputs, the generator and the
// minimizer depend on nothing heavy; the Target drives a node.
package peerfuzz

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// Bounds of an input read from a file: the generator stays far inside
// them (at most 11 steps of a few hundred bytes, pauses under 400 ms), and
// a replay stays minutes long.
const (
	MaxSteps     = 1000
	MaxStepBytes = 64 << 10
	MaxBytes     = 1 << 20 // all steps'
	MaxSplits    = 1000
	MaxPause     = 30 * time.Second // one step's
	MaxPauses    = 2 * time.Minute  // all steps'
	maxFile      = 8 << 20
)

// Step is one write to the peer port after the handshake.
type Step struct {
	What string `json:"what"` // what the generator meant, for the report
	Hex  string `json:"hex"`  // the bytes
	// Split sends the bytes in segments of these sizes (the rest in one
	// more); empty: one write.
	Split   []int `json:"split,omitempty"`
	PauseMS int   `json:"pause_ms,omitempty"` // before the next step
}

// Bytes decodes the step's bytes.
func (s Step) Bytes() []byte {
	b, _ := hex.DecodeString(s.Hex)
	return b
}

// Segments cuts the bytes as Split says.
func (s Step) Segments() [][]byte {
	b := s.Bytes()
	var out [][]byte
	for _, n := range s.Split {
		if n <= 0 || n >= len(b) {
			break
		}
		out = append(out, b[:n])
		b = b[n:]
	}
	if len(b) > 0 {
		out = append(out, b)
	}
	return out
}

// Ends of an input: how the connection is left after the last step.
const (
	EndFIN     = "fin"     // harp closes its side (a FIN) and reads until HAProxy closes
	EndSilence = "silence" // the connection stays open, silent, for 2 s
	EndReset   = "reset"   // harp resets the connection (RST)
)

// Input is one connection's worth of steps.
type Input struct {
	Seed  int64  `json:"seed"` // the run's seed
	N     int    `json:"n"`    // the input's number in the run (with Seed, it replays)
	Steps []Step `json:"steps"`
	End   string `json:"end"`
}

// Size is the number of bytes the input sends.
func (in Input) Size() int {
	n := 0
	for _, s := range in.Steps {
		n += len(s.Hex) / 2
	}
	return n
}

// String lists the steps, one a line.
func (in Input) String() string {
	var b strings.Builder
	for i, s := range in.Steps {
		fmt.Fprintf(&b, "%2d. %s: %s", i+1, s.What, s.Hex)
		if len(s.Split) > 0 {
			fmt.Fprintf(&b, " (in segments of %v)", s.Split)
		}
		if s.PauseMS > 0 {
			fmt.Fprintf(&b, ", then %d ms", s.PauseMS)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "then: %s\n", in.End)
	return b.String()
}

// Save writes the input as JSON (a file `harp fuzz replay` reads).
func (in Input) Save(path string) error {
	data, err := json.MarshalIndent(in, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// Load reads an input written by Save, and checks it and its bounds.
func Load(path string) (Input, error) {
	var in Input
	f, err := os.Open(path)
	if err != nil {
		return in, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxFile+1))
	if err != nil {
		return in, err
	}
	if len(data) > maxFile {
		return in, fmt.Errorf("%s: larger than %d MiB: a harp fuzz input is at most that", path, maxFile>>20)
	}
	if err := json.Unmarshal(data, &in); err != nil {
		return in, fmt.Errorf("%s: not a harp fuzz input: %v", path, err)
	}
	if err := in.Check(); err != nil {
		return in, fmt.Errorf("%s: %v", path, err)
	}
	return in, nil
}

// Check says what is wrong with an input: no steps, bad hex, an unknown
// end, or a bound passed.
func (in Input) Check() error {
	if len(in.Steps) == 0 {
		return fmt.Errorf("an input without steps")
	}
	if len(in.Steps) > MaxSteps {
		return fmt.Errorf("%d steps: an input has at most %d", len(in.Steps), MaxSteps)
	}
	var pauses time.Duration
	size := 0
	for i, s := range in.Steps {
		b, err := hex.DecodeString(s.Hex)
		if err != nil {
			return fmt.Errorf("step %d: hex: %v", i+1, err)
		}
		if len(b) > MaxStepBytes {
			return fmt.Errorf("step %d: %d bytes: a step has at most %d", i+1, len(b), MaxStepBytes)
		}
		if size += len(b); size > MaxBytes {
			return fmt.Errorf("the steps send more than %d bytes: at most %d bytes in all", MaxBytes, MaxBytes)
		}
		if len(s.Split) > MaxSplits {
			return fmt.Errorf("step %d: %d split sizes: at most %d", i+1, len(s.Split), MaxSplits)
		}
		for _, k := range s.Split {
			if k <= 0 {
				return fmt.Errorf("step %d: split size %d: want sizes above 0", i+1, k)
			}
		}
		p := time.Duration(s.PauseMS) * time.Millisecond
		if s.PauseMS < 0 || p > MaxPause {
			return fmt.Errorf("step %d: pause_ms %d: want 0 to at most %d", i+1, s.PauseMS, MaxPause.Milliseconds())
		}
		if pauses += p; pauses > MaxPauses {
			return fmt.Errorf("the steps' pauses add up to more than %s: at most %s in all", MaxPauses, MaxPauses)
		}
	}
	switch in.End {
	case EndFIN, EndSilence, EndReset:
	default:
		return fmt.Errorf("end %q: want fin, silence or reset", in.End)
	}
	return nil
}

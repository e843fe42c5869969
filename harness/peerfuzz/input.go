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
	"os"
	"strings"
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

// Load reads an input written by Save, and checks it.
func Load(path string) (Input, error) {
	var in Input
	data, err := os.ReadFile(path)
	if err != nil {
		return in, err
	}
	if err := json.Unmarshal(data, &in); err != nil {
		return in, fmt.Errorf("%s: not a harp fuzz input: %v", path, err)
	}
	if len(in.Steps) == 0 {
		return in, fmt.Errorf("%s: an input without steps", path)
	}
	for i, s := range in.Steps {
		if _, err := hex.DecodeString(s.Hex); err != nil {
			return in, fmt.Errorf("%s: step %d: hex: %v", path, i+1, err)
		}
	}
	switch in.End {
	case EndFIN, EndSilence, EndReset:
	default:
		return in, fmt.Errorf("%s: end %q: want fin, silence or reset", path, in.End)
	}
	return in, nil
}

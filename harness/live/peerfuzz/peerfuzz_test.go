package peerfuzz

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/harp-project/harp/harness/core/peerwire"
)

// The same seed and number give the same input: a finding replays.
func TestGenerateIsDeterministic(t *testing.T) {
	a, b := Generate(42, 7), Generate(42, 7)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same seed and number, different inputs")
	}
	if reflect.DeepEqual(a, Generate(42, 8)) || reflect.DeepEqual(a, Generate(43, 7)) {
		t.Error("another number or seed gave the same input")
	}
}

// Over many inputs the generator covers what the issue lists: valid and
// malformed messages of every kind, split segments, pauses, every end.
func TestGenerateCovers(t *testing.T) {
	seen := map[string]int{}
	decodable, total := 0, 0
	for n := 0; n < 2000; n++ {
		in := Generate(1, n)
		seen["end "+in.End]++
		for _, s := range in.Steps {
			total++
			for _, kind := range []string{"definition of", "with key type", "update of", "-byte key", "unknown table id", "ack cut", "ack", "control message", "class ", "never ends", "far larger", "cut to", "flipped bytes"} {
				if strings.Contains(s.What, kind) {
					seen[kind]++
				}
			}
			if len(s.Split) > 0 {
				seen["split"]++
				if got := strings.Join(segs(s), ""); got != s.Hex {
					t.Fatalf("segments do not add up to the bytes: %s vs %s", got, s.Hex)
				}
			}
			if s.PauseMS > 0 {
				seen["pause"]++
			}
			if _, _, err := peerwire.DecodeMessage(s.Bytes()); err == nil {
				decodable++
			}
		}
	}
	for _, want := range []string{"end fin", "end silence", "end reset", "definition of", "with key type", "update of", "-byte key", "unknown table id", "ack cut", "control message", "class ", "never ends", "far larger", "cut to", "flipped bytes", "split", "pause"} {
		if seen[want] == 0 {
			t.Errorf("never generated: %s", want)
		}
	}
	// Structure-aware: most steps still parse as messages, many do not.
	if decodable < total/3 || decodable == total {
		t.Errorf("%d of %d steps decode: want a mix of valid and malformed", decodable, total)
	}
}

func segs(s Step) []string {
	var out []string
	for _, b := range s.Segments() {
		out = append(out, string(hexOf(b)))
	}
	return out
}

func hexOf(b []byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = append(out, digits[c>>4], digits[c&15])
	}
	return string(out)
}

// The minimizer keeps what triggers and drops the rest, within budget.
func TestMinimize(t *testing.T) {
	in := Input{End: EndSilence}
	for i := 0; i < 12; i++ {
		in.Steps = append(in.Steps, Step{What: "filler", Hex: "0004", Split: []int{1}, PauseMS: 100})
	}
	in.Steps[3] = Step{What: "definition", Hex: "0a82", Split: []int{1}}
	in.Steps[9] = Step{What: "bad ack", Hex: "0a8401", PauseMS: 200}
	// The finding needs the definition before the bad ack.
	triggers := func(c Input) bool {
		def := -1
		for i, s := range c.Steps {
			if s.What == "definition" {
				def = i
			}
			if s.What == "bad ack" && def >= 0 {
				return true
			}
		}
		return false
	}
	trigger := func(c Input) (bool, bool) { return triggers(c), true }
	out, tries, done := Minimize(in, trigger, 100)
	if len(out.Steps) != 2 || out.Steps[0].What != "definition" || out.Steps[1].What != "bad ack" {
		t.Fatalf("minimized to %d steps: %s", len(out.Steps), out)
	}
	if out.Steps[0].Split != nil || out.Steps[1].PauseMS != 0 || out.End != EndFIN || !triggers(out) || !done {
		t.Errorf("details not dropped: %+v", out)
	}
	if tries > 100 || tries == 0 {
		t.Errorf("%d tries", tries)
	}
	// A budget of 3 tries stops early with an input that still triggers.
	out, tries, _ = Minimize(in, trigger, 3)
	if tries != 3 || !triggers(out) {
		t.Errorf("budget: %d tries, still triggers: %v", tries, triggers(out))
	}
	// A try that cannot say stops the minimizer with what triggered.
	k := 0
	out, tries, done = Minimize(in, func(c Input) (bool, bool) {
		if k++; k == 3 {
			return false, false
		}
		return triggers(c), true
	}, 100)
	if done || tries != 3 || !triggers(out) {
		t.Errorf("an unknown try: done %v after %d tries, still triggers: %v", done, tries, triggers(out))
	}
}

func TestSaveLoad(t *testing.T) {
	in := Generate(5, 3)
	path := filepath.Join(t.TempDir(), "finding.json")
	if err := in.Save(path); err != nil {
		t.Fatal(err)
	}
	back, err := Load(path)
	if err != nil || !reflect.DeepEqual(back, in) {
		t.Fatalf("load: %v\n%+v\n%+v", err, back, in)
	}
	bad := Input{Steps: []Step{{Hex: "zz"}}, End: EndFIN}
	bad.Save(path)
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "hex") {
		t.Errorf("bad hex: %v", err)
	}
}

func TestSame(t *testing.T) {
	crash, cli, spin := &Finding{Detector: "crash"}, &Finding{Detector: "cli"}, &Finding{Detector: "spinning"}
	if !Same(crash, &Finding{Detector: "watchdog"}) || Same(crash, spin) || Same(spin, nil) || !Same(spin, &Finding{Detector: "spinning"}) {
		t.Error("a worker seen dead or killed is one finding; spinning is another")
	}
	// A silent CLI (maybe harp's slowness) confirms no crash, and no crash
	// confirms a silent CLI: only one of its own kind does.
	if Same(crash, cli) || Same(cli, &Finding{Detector: "vanished"}) || !Same(cli, &Finding{Detector: "cli"}) {
		t.Error("a finding that is not firm is the same only as its own kind")
	}
}

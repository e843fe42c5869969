package fixcase

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/harp-project/harp/harness/core/obs"
)

func TestMergeCaptured(t *testing.T) {
	old := `[
 {
  "case": "a",
  "fix": "111111111111",
  "answer": "old a\n"
 },
 {
  "case": "b",
  "fix": "222222222222",
  "answer": "b\n"
 }
]
`
	out, err := MergeCaptured([]byte(old), []Facts{
		{Case: "a", Fix: "111111111111", Answer: obs.Value("new a\n")},
		{Case: "c", Fix: "333333333333", Answer: obs.Value("exit 1\n")},
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []Facts
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].Case != "a" || got[1].Case != "b" || got[2].Case != "c" {
		t.Fatalf("order: %+v", got)
	}
	if a, _ := got[0].Answer.Get(); a != "new a\n" {
		t.Errorf("a not replaced: %q", a)
	}
	if b, _ := got[1].Answer.Get(); b != "b\n" || !strings.Contains(string(out), "\"answer\": \"b\\n\"") {
		t.Errorf("b not kept as it was:\n%s", out)
	}
	// An unchanged capture comes back byte for byte.
	same, err := MergeCaptured([]byte(old), nil)
	if err != nil || string(same) != old {
		t.Errorf("unchanged capture rewritten:\n%s", same)
	}
	if _, err := MergeCaptured([]byte(`[{"fix": "x"}]`), nil); err == nil {
		t.Error("an entry without a case was taken")
	}
	if n := CaptureName("v3.1.0", "f2b97918e0123", ""); n != "facts-3.1.0-f2b97918e.json" || CaptureVersion(n) != "3.1.0" || CaptureFlavor(n) != "" {
		t.Errorf("name %q, version %q", n, CaptureVersion(n))
	}
	if n := CaptureName("v3.1.0", "f2b97918e0123", "asan"); n != "facts-3.1.0-f2b97918e-asan.json" || CaptureVersion(n) != "3.1.0" || CaptureFlavor(n) != "asan" {
		t.Errorf("name %q, version %q, flavour %q", n, CaptureVersion(n), CaptureFlavor(n))
	}
}

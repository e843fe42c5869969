package judge

import (
	"strings"
	"testing"
	"time"

	"github.com/harp-project/harp/harness/core/obs"
	"github.com/harp-project/harp/harness/core/verdict"
)

// Facts as real rounds record them (3.4.7: keys everywhere 20-80 ms after
// their write).
func TestJudge(t *testing.T) {
	keys := []string{"c1-000", "c1-001", "h1-000"}
	all := map[string]time.Duration{"c1-000": 21 * time.Millisecond, "c1-001": 35 * time.Millisecond, "h1-000": 80 * time.Millisecond}
	some, none := map[string]time.Duration{"c1-000": 1, "c1-001": 1}, obs.Value("")
	for _, c := range []struct {
		name              string
		f                 Facts
		violation, remark string
		want              verdict.Verdict
	}{
		{"every key in time: held", Facts{Keys: keys, Delays: all, WrongData: none}, "", "", verdict.Pass},
		{"a key still missing at the re-read", Facts{Keys: keys, Delays: map[string]time.Duration{"c1-000": 1}, WrongData: none,
			StillMissing: obs.Opt(obs.Value(map[string][]string{"node3": {"c1-001", "h1-000"}}))},
			"2 of 3 keys not on every node 15s after their write (node3 lacks 2)", "", verdict.Reproduced},
		{"a key late but there at the re-read: a remark", Facts{Keys: keys, Delays: some, StillMissing: obs.Opt(obs.Value(map[string][]string{})), WrongData: none},
			"", "keys on every node only after their deadline", verdict.Pass},
		{"data that never settled", Facts{Keys: keys, Delays: all, WrongData: obs.Value("1 replicated entries hold other data than was written (e.g. h1-000 on node2 has http_req_cnt=2, want 3)")},
			"1 replicated entries hold other data than was written (e.g. h1-000 on node2 has http_req_cnt=2, want 3)", "", verdict.Reproduced},
		// Harness faults: a table harp could not read (today an ERROR) is unknown.
		{"the re-read failed: neither missing nor late", Facts{Keys: keys, Delays: some, WrongData: none,
			StillMissing: obs.Opt(obs.Failure[map[string][]string]("show table cluster/tbl: EOF"))}, "", "", verdict.Inconclusive},
		{"the data could not be read", Facts{Keys: keys, Delays: all, WrongData: obs.Failure[string]("show table cluster/tbl: i/o timeout")}, "", "", verdict.Inconclusive},
	} {
		v, r := Round(c.f)
		if v != c.violation || r != c.remark {
			t.Errorf("%s: got %q, %q", c.name, v, r)
		}
		tr := verdict.Trial{N: 1, Violation: v, Remark: r, Evidence: &c.f}
		if got, _, reason := verdict.Decide(verdict.Outcome{Trials: []verdict.Trial{tr}}, "rounds"); got != c.want {
			t.Errorf("%s: %s (%s), want %s", c.name, got, reason, c.want)
		}
	}
}

// Delays count from each key's own write and are never negative.
func TestSince(t *testing.T) {
	t0 := time.Now()
	seen := map[string]time.Time{"a": t0.Add(50 * time.Millisecond), "b": t0}
	written := map[string]time.Time{"a": t0, "b": t0.Add(10 * time.Millisecond)}
	d := Since(seen, written)
	if d["a"] != 50*time.Millisecond || d["b"] != 0 {
		t.Errorf("delays: %v", d)
	}
	if med, max := Durations(d); med != 50*time.Millisecond || max != 50*time.Millisecond || !strings.Contains(med.String(), "ms") {
		t.Errorf("median %s max %s", med, max)
	}
}

package judge

import (
	"testing"

	"github.com/harp-project/harp/harness/core/fixcase"
)

// The judge on facts captured from the nine release tags (v2.6.0 to
// v3.4.0): the cases each release fails are those whose fix it predates
// (or whose bug it alone had).
func TestJudgeOnCaptures(t *testing.T) {
	err := fixcase.DiffCaptured("../../../../fixtures/upstream-fixes/captures", Cases, map[string][]string{
		"facts-2.6.0-a1efc048b.json": {"connect-src-inc-gpc-untracked", "http-other-table-counter-by-own-key"},
		"facts-2.7.0-437fd289f.json": {"connect-src-inc-gpc-untracked", "http-other-table-counter-by-own-key"},
		"facts-2.8.0-fdd8154ed.json": {"connect-src-inc-gpc-untracked", "failed-entry-allocations-not-counted", "http-other-table-counter-by-own-key"},
		"facts-2.9.0-fddb8c13b.json": {"connect-src-inc-gpc-untracked", "failed-entry-allocations-not-counted", "http-other-table-counter-by-own-key"},
		"facts-3.0.0-5590ada47.json": {"connect-src-inc-gpc-untracked", "failed-entry-allocations-not-counted", "http-other-table-counter-by-own-key", "string-key-with-nul-one-entry"},
		"facts-3.1.0-f2b97918e.json": {"failed-entry-allocations-not-counted", "http-other-table-counter-by-own-key", "string-key-with-nul-one-entry"},
		"facts-3.2.0-e134140d2.json": {"expired-entries-all-purged", "failed-entry-allocations-not-counted", "string-key-with-nul-one-entry"},
		"facts-3.3.0-7832fb21f.json": {"string-key-with-nul-one-entry"},
		"facts-3.4.0-64a335366.json": {"string-key-with-nul-one-entry"},
	})
	if err != nil {
		t.Error(err)
	}
}

// Output harp cannot read is unknown (an error), never a violation
// (f084f4d failed the check on it).
func TestUnreadableIdleWorkerAfterEntriesExpired(t *testing.T) {
	for _, c := range Cases {
		if c.ID == "idle-worker-after-entries-expired" {
			if ok, why, err := c.Want("show activity: EOF"); err == nil {
				t.Errorf("judged: %v %q", ok, why)
			}
			return
		}
	}
	t.Fatal("no case")
}

// Output harp cannot read is unknown (an error), never a violation
// (f084f4d failed the check on it).
func TestUnreadableHttpOtherTableCounterByOwnKey(t *testing.T) {
	for _, c := range Cases {
		if c.ID == "http-other-table-counter-by-own-key" {
			if ok, why, err := c.Want(""); err == nil {
				t.Errorf("judged: %v %q", ok, why)
			}
			return
		}
	}
	t.Fatal("no case")
}

// The tick-wrap judge on answers captured from the fix's parent
// (b9809fe0d0dd) and the fix (93f994e8b17d): no release tag had the bug.
func TestExpireAcrossWrapOnCommitCaptures(t *testing.T) {
	for _, c := range []struct {
		build, answer string
		held          bool
	}{
		{"3.3-dev11-b9809fe0d", "tshort still held 41 entries 16.0 s after they were due (set at 9.0 s, due at 14.0 s, the wrap at 20 s)", false},
		{"3.3-dev11-93f994e8b", "tshort emptied 0.0 s after its entries were due (set at 9.0 s, due at 14.0 s, the wrap at 20 s)", true},
		// The form since harp counts the last reading that held entries.
		{"3.3-dev11-b9809fe0d", "tshort still held 41 entries 16.1 s after they were due (set at 9.0 s, due at 14.0 s, the wrap at 20 s)", false},
		{"3.3-dev11-93f994e8b", "tshort last held entries -0.2 s after they were due, then emptied (set at 9.0 s, due at 14.0 s, the wrap at 20 s)", true},
	} {
		for _, k := range Cases {
			if k.ID == "expire-before-tick-wrap-purged" {
				if ok, why, err := k.Want(c.answer); err != nil || ok != c.held {
					t.Errorf("on %s: held %v (%s, %v), want %v", c.build, ok, why, err, c.held)
				}
			}
		}
	}
}

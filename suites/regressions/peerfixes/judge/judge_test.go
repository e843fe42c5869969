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
		"facts-2.6.0-a1efc048b.json": {"peer-unknown-table-traffic-keeps-session"},
		"facts-2.7.0-437fd289f.json": {},
		"facts-2.8.0-fdd8154ed.json": {"peer-stalled-reader-no-sync-storm", "peer-truncated-varint-then-close"},
		"facts-2.9.0-fddb8c13b.json": {"peer-updates-past-empty-table-pushed"},
		"facts-3.0.0-5590ada47.json": {},
		"facts-3.1.0-f2b97918e.json": {"peer-incoming-updates-obey-at-once"},
		"facts-3.2.0-e134140d2.json": {},
		"facts-3.3.0-7832fb21f.json": {"peer-dict-id-out-of-range-refused", "peer-half-closed-connection-closed"},
		"facts-3.4.0-64a335366.json": {},
		// The asan flavour; 3.3.0 never took the oversized server_key in (its
		// case unknown there, its fact left out): the fix's cells are 3.4.0's and its pair's.
		"facts-3.3.0-7832fb21f-asan.json": {"peer-dict-id-out-of-range-refused", "peer-table-key-type-out-of-range-asan"},
		"facts-3.4.0-64a335366-asan.json": {"peer-oversized-server-key-taught-asan"},
	})
	if err != nil {
		t.Error(err)
	}
}

// The judge on answers from the commit builds where 4ede46be4eb0 came
// (harp matrix runs of the fix's parent and the fix, 2026-12-06): peers
// shards came in 2.7-dev9, so no release shows the bug.
func TestJudgeOnCommitAnswers(t *testing.T) {
	if err := fixcase.DiffAnswers(Cases, []fixcase.Answer{
		{ID: "peer-learnt-entry-keeps-its-shard", Build: "2.7-dev10-b12be7c1b", Text: "of 16 learnt entries updated on the node: 0 reached one shard peer, 16 none, 0 both", Held: false},
		{ID: "peer-learnt-entry-keeps-its-shard", Build: "2.7-dev10-4ede46be4", Text: "of 16 learnt entries updated on the node: 16 reached one shard peer, 0 none, 0 both", Held: true},
	}); err != nil {
		t.Error(err)
	}
}

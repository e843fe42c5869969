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
		"facts-2.6.0-a1efc048b.json":      {"cfg-len-needs-digits", "cfg-max-reloads-negative-refused", "cfg-sc-inc-gpc-error-names-action", "cfg-tcp-connection-sc-set-gpt"},
		"facts-2.7.0-437fd289f.json":      {"cfg-len-needs-digits", "cfg-max-reloads-negative-refused", "cfg-sc-inc-gpc-error-names-action", "cfg-stats-bind-process-message", "cfg-tcp-connection-sc-set-gpt"},
		"facts-2.8.0-fdd8154ed.json":      {"cfg-max-reloads-negative-refused", "cfg-stick-counters-index", "cfg-tcp-connection-sc-add-gpc", "cfg-tcp-connection-sc-set-gpt"},
		"facts-2.9.0-fddb8c13b.json":      {"cfg-max-reloads-negative-refused", "cfg-stick-counters-index"},
		"facts-3.0.0-5590ada47.json":      {"cfg-max-reloads-negative-refused", "cfg-stick-counters-index"},
		"facts-3.1.0-f2b97918e.json":      {"cfg-check-with-daemon-reports-errors", "cfg-stick-counters-index"},
		"facts-3.2.0-e134140d2.json":      {"cfg-stick-counters-index"},
		"facts-3.3.0-7832fb21f.json":      {},
		"facts-3.4.0-64a335366.json":      {},
		"facts-2.8.0-fdd8154ed-asan.json": {"cfg-max-reloads-negative-refused", "cfg-stick-counters-index", "cfg-stick-table-peers-twice-no-leak", "cfg-tcp-connection-sc-add-gpc", "cfg-tcp-connection-sc-set-gpt"},
		"facts-2.9.0-fddb8c13b-asan.json": {"cfg-max-reloads-negative-refused", "cfg-stick-counters-index"},
	})
	if err != nil {
		t.Error(err)
	}
}

package judge

import (
	"testing"

	"github.com/harp-project/harp/harness/fixcase"
)

// The judge on facts captured from the nine release tags (v2.6.0 to
// v3.4.0): the cases each release fails are those whose fix it predates
// (or whose bug it alone had).
func TestJudgeOnCaptures(t *testing.T) {
	err := fixcase.DiffCaptured("../../../../fixtures/upstream-fixes/captures", Cases, map[string][]string{
		"facts-2.6.0-a1efc048b.json": {"cli-empty-line-ignored", "cli-env-without-sockpairs", "cli-error-ends-with-empty-line", "cli-help-show-table-argument-optional", "cli-pipelined-after-pause", "cli-set-table-invalid-ip-refused", "cli-too-big-command-reported", "cli-too-many-args-refused"},
		"facts-2.7.0-437fd289f.json": {"cli-anon-global-key", "cli-empty-line-ignored", "cli-env-without-sockpairs", "cli-error-ends-with-empty-line", "cli-help-show-table-argument-optional", "cli-pipelined-after-pause", "cli-set-table-invalid-ip-refused", "cli-too-big-command-reported", "cli-too-many-args-refused"},
		"facts-2.8.0-fdd8154ed.json": {"cli-env-without-sockpairs", "cli-error-ends-with-empty-line", "cli-help-show-table-argument-optional", "cli-pipelined-after-pause", "cli-set-table-invalid-ip-refused", "cli-too-big-command-reported", "cli-too-many-args-refused", "show-fd-type-then-number"},
		"facts-2.9.0-fddb8c13b.json": {"cli-env-without-sockpairs", "cli-error-ends-with-empty-line", "cli-help-show-table-argument-optional", "cli-pipelined-after-pause", "cli-too-big-command-reported", "cli-too-many-args-refused", "show-fd-type-then-number"},
		"facts-3.0.0-5590ada47.json": {"cli-env-without-sockpairs", "cli-help-show-table-argument-optional", "cli-immediate-abort-released", "cli-map-payload-crlf", "cli-pipelined-then-close-all-run", "cli-too-many-args-refused", "cli-user-level-refusal-releases-entry", "show-fd-type-then-number"},
		"facts-3.1.0-f2b97918e.json": {"cli-debug-counters-one-line-each", "cli-help-show-table-argument-optional", "cli-map-payload-crlf", "cli-pipelined-then-close-all-run", "cli-too-many-args-refused", "cli-user-level-refusal-releases-entry", "show-fd-type-then-number"},
		"facts-3.2.0-e134140d2.json": {"cli-help-show-table-argument-optional", "cli-pipelined-then-close-all-run", "cli-quit-releases-its-buffer", "cli-user-level-refusal-releases-entry", "show-fd-type-then-number"},
		"facts-3.3.0-7832fb21f.json": {"cli-help-show-table-argument-optional", "show-fd-type-then-number"},
		"facts-3.4.0-64a335366.json": {"show-fd-any-group-form", "show-fd-type-then-number"},
	})
	if err != nil {
		t.Error(err)
	}
}

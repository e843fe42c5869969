package judge

import (
	"io/fs"
	"slices"
	"testing"

	"github.com/harp-project/harp/fixtures"
	"github.com/harp-project/harp/harness/fixcase"
)

// The run order (docs/upstream-bugs.md and fixtures/upstream-bugs/ name
// these IDs; the last ones must stay last: see Cases).
var wantIDs = []string{
	"cli-empty-line-ignored",
	"cli-too-many-args-refused",
	"cli-too-big-command-reported",
	"cli-set-table-invalid-ip-refused",
	"cli-anon-global-key",
	"cli-env-without-sockpairs",
	"cli-map-payload-crlf",
	"cli-immediate-abort-released",
	"cli-debug-counters-one-line-each",
	"cli-pipelined-after-pause",
	"cli-help-show-table-argument-optional",
	"mcli-relative-pid-checked",
	"mcli-pipelined-after-expert-mode",
	"mcli-severity-output-applies",
	"mcli-user-level-kept-through-pid-prefix",
	"cfg-check-with-daemon-reports-errors",
	"cfg-stats-bind-process-message",
	"cfg-len-needs-digits",
	"cfg-tcp-connection-sc-set-gpt",
	"cfg-tcp-connection-sc-add-gpc",
	"cfg-stick-counters-index",
	"cfg-max-reloads-negative-refused",
	"cfg-sc-inc-gpc-error-names-action",
	"cli-64-args-then-next-command",
	"cli-env-cfgfiles",
	"mcli-at-at-prefix-split-line",
	"mcli-master-uptime-sane",
	"exec-vv-exits-cleanly",
	"exec-check-master-worker",
	"exec-mworker-libs-dumped-once",
	"exec-mworker-keywords-dumped-once",
	"exec-mworker-pollers-dumped-once",
	"exec-program-without-command-refused",
	"exec-localpeer-set-before-config",
	"cli-partial-command-eof-no-error",
	"cli-user-level-refusal-releases-entry",
	"peer-unknown-table-traffic-keeps-session",
	"peer-truncated-varint-then-close",
	"http-other-table-counter-by-own-key",
	"exec-thread-groups-master-cli",
	"cli-pipelined-then-close-all-run",
	"cli-error-ends-with-empty-line",
	"cli-quit-releases-its-buffer",
	"expired-entries-all-purged",
	"listener-shards-distinct-ids",
	"listener-shards-close-ids-distinct",
	"cli-idle-prompt-closed-on-timeout",
	"sc-generic-fetch-counter-above-9",
	"idle-worker-after-entries-expired",
	"idle-worker-with-entry-in-use",
	"show-fd-type-then-number",
	"show-fd-any-group-form",
	"string-key-with-nul-one-entry",
	"frontend-full-then-rate-limited-resumes",
	"peer-half-closed-connection-closed",
	"connect-src-inc-gpc-untracked",
}

// Every case file parses, the cases are those of wantIDs in its order, and
// `want go` has Go code exactly where a file says so.
func TestCaseFiles(t *testing.T) {
	names, _ := fs.Glob(fixtures.UpstreamFixes, "upstream-fixes/*.case")
	for _, name := range names {
		data, _ := fs.ReadFile(fixtures.UpstreamFixes, name)
		if _, err := fixcase.Parse(name, data); err != nil {
			t.Error(err)
		}
	}
	var ids []string
	for _, c := range Cases {
		ids = append(ids, c.ID)
		if _, ok := goWants[c.ID]; ok != c.Rule.Go {
			t.Errorf("%s: want go %v, Go judge %v", c.ID, c.Rule.Go, ok)
		}
	}
	if !slices.Equal(ids, wantIDs) {
		t.Errorf("cases\n  %v\nwant\n  %v", ids, wantIDs)
	}
	if len(goWants) != 15 {
		t.Errorf("%d Go judges, want one for each of the 15 cases of want go", len(goWants))
	}
}

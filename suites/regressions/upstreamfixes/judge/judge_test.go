package judge

import (
	"encoding/json"
	"os"
	"sort"
	"strings"
	"testing"
)

// The judge on facts captured from the nine release tags (v2.6.0 to
// v3.4.0): the cases each release fails are those whose fix it predates
// (or whose bug it alone had, as v2.8.0's death on a truncated peers
// message).
func TestJudgeOnCaptures(t *testing.T) {
	for file, want := range map[string][]string{
		"facts-2.6.0-a1efc048b.json": {"cfg-len-needs-digits", "cfg-max-reloads-negative-refused", "cfg-sc-inc-gpc-error-names-action", "cfg-tcp-connection-sc-set-gpt", "cli-empty-line-ignored", "cli-env-without-sockpairs", "cli-error-ends-with-empty-line", "cli-help-show-table-argument-optional", "cli-pipelined-after-pause", "cli-set-table-invalid-ip-refused", "cli-too-big-command-reported", "cli-too-many-args-refused", "connect-src-inc-gpc-untracked", "frontend-full-then-rate-limited-resumes", "http-other-table-counter-by-own-key", "listener-shards-close-ids-distinct", "listener-shards-distinct-ids", "mcli-relative-pid-checked", "mcli-severity-output-applies", "peer-unknown-table-traffic-keeps-session"},
		"facts-2.7.0-437fd289f.json": {"cfg-len-needs-digits", "cfg-max-reloads-negative-refused", "cfg-sc-inc-gpc-error-names-action", "cfg-stats-bind-process-message", "cfg-tcp-connection-sc-set-gpt", "cli-anon-global-key", "cli-empty-line-ignored", "cli-env-without-sockpairs", "cli-error-ends-with-empty-line", "cli-help-show-table-argument-optional", "cli-pipelined-after-pause", "cli-set-table-invalid-ip-refused", "cli-too-big-command-reported", "cli-too-many-args-refused", "connect-src-inc-gpc-untracked", "frontend-full-then-rate-limited-resumes", "http-other-table-counter-by-own-key", "listener-shards-close-ids-distinct", "listener-shards-distinct-ids", "mcli-severity-output-applies"},
		"facts-2.8.0-fdd8154ed.json": {"cfg-max-reloads-negative-refused", "cfg-stick-counters-index", "cfg-tcp-connection-sc-add-gpc", "cfg-tcp-connection-sc-set-gpt", "cli-env-without-sockpairs", "cli-error-ends-with-empty-line", "cli-help-show-table-argument-optional", "cli-pipelined-after-pause", "cli-set-table-invalid-ip-refused", "cli-too-big-command-reported", "cli-too-many-args-refused", "connect-src-inc-gpc-untracked", "exec-thread-groups-master-cli", "frontend-full-then-rate-limited-resumes", "http-other-table-counter-by-own-key", "listener-shards-close-ids-distinct", "listener-shards-distinct-ids", "mcli-severity-output-applies", "peer-truncated-varint-then-close", "show-fd-type-then-number"},
		"facts-2.9.0-fddb8c13b.json": {"cfg-max-reloads-negative-refused", "cfg-stick-counters-index", "cli-env-without-sockpairs", "cli-error-ends-with-empty-line", "cli-help-show-table-argument-optional", "cli-pipelined-after-pause", "cli-too-big-command-reported", "cli-too-many-args-refused", "connect-src-inc-gpc-untracked", "frontend-full-then-rate-limited-resumes", "http-other-table-counter-by-own-key", "listener-shards-close-ids-distinct", "listener-shards-distinct-ids", "mcli-severity-output-applies", "show-fd-type-then-number"},
		"facts-3.0.0-5590ada47.json": {"cfg-max-reloads-negative-refused", "cfg-stick-counters-index", "cli-env-without-sockpairs", "cli-help-show-table-argument-optional", "cli-immediate-abort-released", "cli-map-payload-crlf", "cli-pipelined-then-close-all-run", "cli-too-many-args-refused", "cli-user-level-refusal-releases-entry", "connect-src-inc-gpc-untracked", "http-other-table-counter-by-own-key", "listener-shards-close-ids-distinct", "mcli-pipelined-after-expert-mode", "mcli-severity-output-applies", "show-fd-type-then-number", "string-key-with-nul-one-entry"},
		"facts-3.1.0-f2b97918e.json": {"cfg-check-with-daemon-reports-errors", "cfg-stick-counters-index", "cli-debug-counters-one-line-each", "cli-help-show-table-argument-optional", "cli-map-payload-crlf", "cli-pipelined-then-close-all-run", "cli-too-many-args-refused", "cli-user-level-refusal-releases-entry", "http-other-table-counter-by-own-key", "listener-shards-close-ids-distinct", "show-fd-type-then-number", "string-key-with-nul-one-entry"},
		"facts-3.2.0-e134140d2.json": {"cfg-stick-counters-index", "cli-help-show-table-argument-optional", "cli-pipelined-then-close-all-run", "cli-quit-releases-its-buffer", "cli-user-level-refusal-releases-entry", "expired-entries-all-purged", "listener-shards-close-ids-distinct", "mcli-user-level-kept-through-pid-prefix", "show-fd-type-then-number", "string-key-with-nul-one-entry"},
		"facts-3.3.0-7832fb21f.json": {"cli-help-show-table-argument-optional", "mcli-user-level-kept-through-pid-prefix", "peer-half-closed-connection-closed", "show-fd-type-then-number", "string-key-with-nul-one-entry"},
		"facts-3.4.0-64a335366.json": {"show-fd-any-group-form", "show-fd-type-then-number", "string-key-with-nul-one-entry"},
	} {
		data, err := os.ReadFile("testdata/" + file)
		if err != nil {
			t.Fatal(err)
		}
		var fs []Facts
		if err := json.Unmarshal(data, &fs); err != nil {
			t.Fatal(err)
		}
		var failed []string
		for _, f := range fs {
			cs, violation, unmet := Check(f)
			if unmet != "" {
				t.Errorf("%s: %s unmet: %s", file, f.Case, unmet)
			}
			if (violation != "") != (len(cs.Failed()) > 0) {
				t.Errorf("%s: %s: violation %q but checks %+v", file, f.Case, violation, cs)
			}
			if violation != "" {
				failed = append(failed, f.Case)
			}
		}
		sort.Strings(failed)
		if strings.Join(failed, " ") != strings.Join(want, " ") {
			t.Errorf("%s: failed\n  %s\nwant\n  %s", file, strings.Join(failed, " "), strings.Join(want, " "))
		}
	}
}

func TestJudgeRules(t *testing.T) {
	died := Facts{Case: "connect-src-inc-gpc-untracked", Died: true}
	if cs, v, _ := Check(died); v == "" || len(cs) != 1 || cs[0].Held || !strings.Contains(v, "the worker died") {
		t.Errorf("a dead worker: %q %+v", v, cs)
	}
	if cs, v, u := Check(Facts{Case: "cli-anon-global-key", Skip: "cli-anon-global-key needs HAProxy 2.7"}); v != "" || u != "" || len(cs) != 0 {
		t.Errorf("not applicable is no check: %q %q %+v", v, u, cs)
	}
	if cs, v, u := Check(Facts{Case: "cfg-len-needs-digits", HarpErr: "the control config (without the case's lines) does not load"}); v != "" || u == "" || len(cs) != 0 {
		t.Errorf("harp's failure decides nothing: %q %q %+v", v, u, cs)
	}
	seen := map[string]bool{}
	for _, c := range Cases {
		if seen[c.ID] || len(c.Fix) != 12 || c.Want == nil || c.Does == "" || c.Expects == "" {
			t.Errorf("case %+v: ids unique, a 12-digit fix, a judge and its words", c.ID)
		}
		seen[c.ID] = true
	}
}

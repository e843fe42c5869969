package judge

import (
	"fmt"
	"strings"
	"testing"

	"github.com/harp-project/harp/harness/core/fixcase"
)

// The judge on facts captured from the nine release tags (v2.6.0 to
// v3.4.0): the cases each release fails are those whose fix it predates
// (or whose bug it alone had).
func TestJudgeOnCaptures(t *testing.T) {
	err := fixcase.DiffCaptured("../../../../fixtures/upstream-fixes/captures", Cases, map[string][]string{
		"facts-2.6.0-a1efc048b.json":      {"cli-empty-line-ignored", "cli-env-without-sockpairs", "cli-error-ends-with-empty-line", "cli-help-show-table-argument-optional", "cli-httpclient-wait-no-spin", "cli-pipelined-after-pause", "cli-pipelined-then-close-all-run", "cli-set-table-invalid-ip-refused", "cli-too-big-command-reported", "cli-too-many-args-refused"},
		"facts-2.7.0-437fd289f.json":      {"cli-anon-global-key", "cli-empty-line-ignored", "cli-env-without-sockpairs", "cli-error-ends-with-empty-line", "cli-help-show-table-argument-optional", "cli-pipelined-after-pause", "cli-pipelined-then-close-all-run", "cli-set-table-invalid-ip-refused", "cli-too-big-command-reported", "cli-too-many-args-refused"},
		"facts-2.8.0-fdd8154ed.json":      {"cli-env-without-sockpairs", "cli-error-ends-with-empty-line", "cli-help-show-table-argument-optional", "cli-pipelined-after-pause", "cli-set-table-invalid-ip-refused", "cli-too-big-command-reported", "cli-too-many-args-refused", "show-fd-type-then-number"},
		"facts-2.9.0-fddb8c13b.json":      {"cli-env-without-sockpairs", "cli-error-ends-with-empty-line", "cli-help-show-table-argument-optional", "cli-newline-chained-commands-warned", "cli-pipelined-after-pause", "cli-too-big-command-reported", "cli-too-many-args-refused", "show-fd-type-then-number"},
		"facts-3.0.0-5590ada47.json":      {"cli-env-without-sockpairs", "cli-help-show-table-argument-optional", "cli-immediate-abort-released", "cli-map-payload-crlf", "cli-pipelined-then-close-all-run", "cli-too-many-args-refused", "cli-user-level-refusal-releases-entry", "del-server-with-retrying-stream-refused", "show-fd-type-then-number"},
		"facts-3.1.0-f2b97918e.json":      {"cli-debug-counters-one-line-each", "cli-help-show-table-argument-optional", "cli-map-payload-crlf", "cli-pipelined-then-close-all-run", "cli-too-many-args-refused", "cli-user-level-refusal-releases-entry", "show-fd-type-then-number"},
		"facts-3.2.0-e134140d2.json":      {"cli-batch-over-buffer-all-run", "cli-help-show-table-argument-optional", "cli-pipelined-then-close-all-run", "cli-quit-releases-its-buffer", "cli-user-level-refusal-releases-entry", "show-fd-type-then-number"},
		"facts-3.3.0-7832fb21f.json":      {"cli-help-show-table-argument-optional", "del-server-with-retrying-stream-refused", "show-fd-type-then-number"},
		"facts-3.4.0-64a335366.json":      {"show-fd-any-group-form", "show-fd-type-then-number"},
		"facts-2.6.0-a1efc048b-asan.json": {"trace-peers-event-list-asan"},
		"facts-2.9.0-fddb8c13b-asan.json": {"trace-peers-event-list-asan"},
		"facts-3.0.0-5590ada47-asan.json": {},
		"facts-3.3.0-7832fb21f-asan.json": {},
		"facts-3.4.0-64a335366-asan.json": {},
	})
	if err != nil {
		t.Error(err)
	}
}

// Every attempt's keys are counted on their own: one attempt that ran all
// its commands hides no other's loss.
func TestPipelinedAttempts(t *testing.T) {
	table := func(counts ...int) string {
		s := fmt.Sprintf("%d connections\n", len(counts)) + fixcase.ThenMark + "# table: tpipe, type: ip, size:1024, used:0\n"
		for a, k := range counts {
			for i := 1; i <= k; i++ {
				s += fmt.Sprintf("0x1: key=10.%d.0.%d use=0 exp=3599979 gpc0=1\n", a+1, i)
			}
		}
		return s
	}
	want := goWants["cli-pipelined-then-close-all-run"]
	if ok, why, _ := want(table(50, 50, 50, 50, 50)); !ok {
		t.Errorf("all ran: %s", why)
	}
	if ok, why, _ := want(table(50, 3, 50, 50, 50)); ok || !strings.Contains(why, "50, 3, 50, 50, 50 ran") {
		t.Errorf("one attempt lost commands: %v %s", ok, why)
	}
	if ok, _, _ := want(table(50, 50, 50, 50)[len("4 connections\n"):]); !ok {
		t.Error("a capture of one attempt with no count: the first attempt's keys")
	}
}

// A drive's answer without its counts decides nothing.
func TestQuitCountsMissingIsUnknown(t *testing.T) {
	if _, _, err := goWants["cli-quit-releases-its-buffer"]("trash used ? after 200 quit"); err == nil {
		t.Error("no counts judged")
	}
}

// The old worker's loop rate after a reload: an idle one holds, one woken
// in a loop fails, and one that died of it (3.2-dev5's "bogus APPCTX"
// abort) fails with its exit; no rate is unknown.
func TestOldWorkerIdle(t *testing.T) {
	judge := goWants["cli-old-worker-idle-after-reload"]
	for a, want := range map[string]bool{
		"the old worker looped 1 times a second after the reload":                                                             true,
		"the old worker looped 120000 times a second after the reload":                                                        false,
		"the old worker died after the reload: [WARNING]  (1) : Former worker (8) exited with code 132 (Illegal instruction)": false,
	} {
		if ok, _, err := judge(a); err != nil || ok != want {
			t.Errorf("%q: %v, %v; want %v", a, ok, err, want)
		}
	}
	if _, _, err := judge("Unknown command"); err == nil {
		t.Error("no rate judged")
	}
}

// The judge on answers from the commit builds where 598c7f164c11 came
// (harp matrix runs of the fix's parent and the fix, 2026-12-06): no
// release shows the warning (3.0.0 runs one line per session).
func TestJudgeOnCommitAnswers(t *testing.T) {
	if err := fixcase.DiffAnswers(Cases, []fixcase.Answer{
		{ID: "cli-newline-chained-commands-warned", Build: "3.0-dev3-e018e8a41", Text: "both commands answered; the worker warned of nothing before server bmark/s1's maintenance", Held: false},
		{ID: "cli-newline-chained-commands-warned", Build: "3.0-dev3-598c7f164", Text: "both commands answered; the worker's warnings before server bmark/s1's maintenance: Commands sent to the CLI were chained using a new line character while in non-interactive mode. This is not reliable, not officially supported and will not be supported anymore in future versions. Please use ';' to delimit commands instead.", Held: true},
	}); err != nil {
		t.Error(err)
	}
}

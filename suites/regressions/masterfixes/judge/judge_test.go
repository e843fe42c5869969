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
		"facts-2.6.0-a1efc048b.json":      {"master-env-processes-intact-after-reload", "master-failed-reloads-no-socket-leak", "master-wait-mode-nofile-default-maxconn", "mcli-relative-pid-checked", "mcli-severity-output-applies"},
		"facts-2.7.0-437fd289f.json":      {"master-env-processes-intact-after-reload", "master-failed-reloads-no-socket-leak", "mcli-severity-output-applies"},
		"facts-2.8.0-fdd8154ed.json":      {"exec-thread-groups-master-cli", "foreground-expose-fd-keeps-listener", "master-env-processes-no-null-version", "master-failed-reloads-no-socket-leak", "mcli-severity-output-applies"},
		"facts-2.9.0-fddb8c13b.json":      {"master-env-processes-no-null-version", "master-x-devnull-no-socket-transfer", "mcli-severity-output-applies"},
		"facts-3.0.0-5590ada47.json":      {"master-env-processes-no-null-version", "mcli-pipelined-after-expert-mode", "mcli-severity-output-applies", "mcli-show-proc-lists-every-worker"},
		"facts-3.1.0-f2b97918e.json":      {"exec-daemon-failure-reported", "exec-daemon-master-failure-reported", "exec-daemon-master-sf-stops-old-master", "exec-pidfile-not-left-by-failed-start", "master-env-processes-no-null-version", "master-failed-worker-load-logged", "master-reexec-sf-lists-no-program", "mcli-show-proc-lists-every-worker", "mcli-show-proc-newest-old-worker-first", "worker-getsocks-error-no-leak", "worker-keeps-master-session"},
		"facts-3.2.0-e134140d2.json":      {"master-env-processes-no-null-version", "master-failed-worker-load-logged", "master-sigusr2-during-parse-waits", "mcli-show-proc-lists-every-worker", "mcli-show-proc-newest-old-worker-first", "mcli-user-level-kept-through-pid-prefix"},
		"facts-3.3.0-7832fb21f.json":      {"master-env-processes-no-null-version", "mcli-show-proc-lists-every-worker", "mcli-show-proc-newest-old-worker-first", "mcli-user-level-kept-through-pid-prefix", "mcli-worker-during-parse-skipped"},
		"facts-3.4.0-64a335366.json":      {},
		"facts-3.0.0-5590ada47-asan.json": {"master-env-processes-no-null-version", "mcli-pipelined-after-expert-mode", "mcli-severity-output-applies", "mcli-show-proc-lists-every-worker"},
		// Single-threaded builds (the nothreads flavour): until 3.2 the old
		// worker never leaves its poll loop after a soft stop; until 2.9
		// cpu-map is not applied in the foreground.
		"facts-2.8.0-fdd8154ed-nothreads.json": {"foreground-cpu-map-applied", "foreground-expose-fd-keeps-listener", "worker-old-leaves-after-reload"},
		"facts-2.9.0-fddb8c13b-nothreads.json": {"worker-old-leaves-after-reload"},
		"facts-3.1.0-f2b97918e-nothreads.json": {"worker-old-leaves-after-reload"},
		"facts-3.2.0-e134140d2-nothreads.json": {},
		"facts-3.1.0-f2b97918e-asan.json":      {"exec-daemon-failure-reported", "exec-daemon-master-failure-reported", "exec-daemon-master-sf-stops-old-master", "exec-pidfile-not-left-by-failed-start", "master-env-processes-no-null-version", "master-failed-worker-load-logged", "master-reexec-sf-lists-no-program", "mcli-show-proc-lists-every-worker", "mcli-show-proc-newest-old-worker-first", "worker-keeps-master-session"},
	})
	if err != nil {
		t.Error(err)
	}
}

// Output harp cannot read is unknown (an error), never a violation
// (f084f4d failed the check on it).
func TestUnreadableMcliMasterUptimeSane(t *testing.T) {
	for _, c := range Cases {
		if c.ID == "mcli-master-uptime-sane" {
			if ok, why, err := c.Want("Unknown command\n"); err == nil {
				t.Errorf("judged: %v %q", ok, why)
			}
			return
		}
	}
	t.Fatal("no case")
}

// The Go judges on answers captured from the commit builds where the
// fixes came (harp matrix runs of the fix's parent and the fix, committed
// under fixtures/upstream-bugs/runs): the tags alone never show these.
func TestJudgeOnCommitCaptures(t *testing.T) {
	if err := fixcase.DiffAnswers(Cases, []fixcase.Answer{
		{ID: "mcli-uptimes-sane-after-reload", Build: "2.8-dev4-fa241939c", Text: "new worker 12; master up 5s before the reload\n#<PID>          <type>          <reloads>       <uptime>        <version>      \n1               master          1 [failed: 0]   0d00h00m00s     2.8-dev4-fa241939c\n# workers\n12              worker          0               0d00h00m00s     2.8-dev4-fa241939c\n# programs\n\n", Held: false},
		{ID: "mcli-uptimes-sane-after-reload", Build: "2.8-dev4-5a7f83af8", Text: "new worker 11; master up 5s before the reload\n#<PID>          <type>          <reloads>       <uptime>        <version>      \n1               master          1 [failed: 0]   0d00h00m05s     2.8-dev4-5a7f83af8\n# workers\n11              worker          0               0d00h00m00s     2.8-dev4-5a7f83af8\n# programs\n\n", Held: true},
		{ID: "worker-fds-flat-with-lingering-workers", Build: "3.1-dev10-745a4c5e9", Text: "sockets of a new worker: 6 with no old worker held, 7 with 3 workers alive", Held: false},
		{ID: "worker-fds-flat-with-lingering-workers", Build: "3.1-dev10-4931d1ca5", Text: "sockets of a new worker: 3 with no old worker held, 3 with 3 workers alive", Held: true},
		// Counted once each worker waited in its event loop (2026-12-06): the
		// bad commit's whole leak, and 3.4.7 counted mid-start before that
		// wait was made (2 of its 3 sockets yet), which had read as the bug.
		{ID: "worker-fds-flat-with-lingering-workers", Build: "3.1-dev10-745a4c5e9", Text: "sockets of a new worker: 6 with no old worker held, 8 with 3 workers alive", Held: false},
		{ID: "worker-fds-flat-with-lingering-workers", Build: "3.4.7-1", Text: "sockets of a new worker: 2 with no old worker held, 3 with 4 workers alive", Held: false},
		{ID: "mcli-at-at-error-names-prefix-only", Build: "3.2-dev11-29632bcab", Text: "Can't find the target PID matching the prefix '@@b[\xb6U'\n\n", Held: false},
		{ID: "mcli-at-at-error-names-prefix-only", Build: "3.2-dev11-0e94339ea", Text: "Can't find the target PID matching the prefix '@@'\n\n", Held: true},
		{ID: "worker-old-leaves-after-reload-threads", Build: "2.7-dev1-4c3d3d2a6", Text: "old worker 8 still listed by show proc 10s after the signal (reload 1 of 5)", Held: false},
		{ID: "worker-old-leaves-after-reload-threads", Build: "2.7-dev1-f34a3fa33", Text: "old workers left 120ms, 917ms, 133ms, 942ms, 121ms after the reload", Held: true},
		{ID: "mcli-show-proc-lists-every-worker", Build: "3.4-dev6-4e937e039", Text: "workers alive (the master's children): 211; listed by show proc: 210 rows, 210 distinct; show proc bytes: 17618", Held: false},
		{ID: "mcli-show-proc-lists-every-worker", Build: "3.4-dev6-10e78d924", Text: "workers alive (the master's children): 211; listed by show proc: 211 rows, 211 distinct; show proc bytes: 17701", Held: true},
	}); err != nil {
		t.Error(err)
	}
}

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
		"facts-2.8.0-fdd8154ed.json":      {"exec-thread-groups-master-cli", "master-env-processes-no-null-version", "master-failed-reloads-no-socket-leak", "mcli-severity-output-applies"},
		"facts-2.9.0-fddb8c13b.json":      {"master-env-processes-no-null-version", "master-x-devnull-no-socket-transfer", "mcli-severity-output-applies"},
		"facts-3.0.0-5590ada47.json":      {"master-env-processes-no-null-version", "mcli-pipelined-after-expert-mode", "mcli-severity-output-applies", "mcli-show-proc-lists-every-worker"},
		"facts-3.1.0-f2b97918e.json":      {"exec-daemon-failure-reported", "exec-daemon-master-failure-reported", "exec-daemon-master-sf-stops-old-master", "exec-pidfile-not-left-by-failed-start", "master-env-processes-no-null-version", "master-failed-worker-load-logged", "master-reexec-sf-lists-no-program", "mcli-show-proc-lists-every-worker", "mcli-show-proc-newest-old-worker-first", "worker-keeps-master-session"},
		"facts-3.2.0-e134140d2.json":      {"master-env-processes-no-null-version", "master-failed-worker-load-logged", "mcli-show-proc-lists-every-worker", "mcli-show-proc-newest-old-worker-first", "mcli-user-level-kept-through-pid-prefix"},
		"facts-3.3.0-7832fb21f.json":      {"master-env-processes-no-null-version", "mcli-show-proc-lists-every-worker", "mcli-show-proc-newest-old-worker-first", "mcli-user-level-kept-through-pid-prefix"},
		"facts-3.4.0-64a335366.json":      {},
		"facts-3.0.0-5590ada47-asan.json": {"master-env-processes-no-null-version", "mcli-pipelined-after-expert-mode", "mcli-severity-output-applies", "mcli-show-proc-lists-every-worker"},
		"facts-3.1.0-f2b97918e-asan.json": {"exec-daemon-failure-reported", "exec-daemon-master-failure-reported", "exec-daemon-master-sf-stops-old-master", "exec-pidfile-not-left-by-failed-start", "master-env-processes-no-null-version", "master-failed-worker-load-logged", "master-reexec-sf-lists-no-program", "mcli-show-proc-lists-every-worker", "mcli-show-proc-newest-old-worker-first", "worker-keeps-master-session"},
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
	for _, c := range []struct {
		id, build, answer string
		held              bool
	}{
		{"mcli-uptimes-sane-after-reload", "2.8-dev4-fa241939c", "new worker 12; master up 5s before the reload\n#<PID>          <type>          <reloads>       <uptime>        <version>      \n1               master          1 [failed: 0]   0d00h00m00s     2.8-dev4-fa241939c\n# workers\n12              worker          0               0d00h00m00s     2.8-dev4-fa241939c\n# programs\n\n", false},
		{"mcli-uptimes-sane-after-reload", "2.8-dev4-5a7f83af8", "new worker 11; master up 5s before the reload\n#<PID>          <type>          <reloads>       <uptime>        <version>      \n1               master          1 [failed: 0]   0d00h00m05s     2.8-dev4-5a7f83af8\n# workers\n11              worker          0               0d00h00m00s     2.8-dev4-5a7f83af8\n# programs\n\n", true},
		{"worker-fds-flat-with-lingering-workers", "3.1-dev10-745a4c5e9", "sockets of a new worker: 6 with no old worker held, 7 with 3 workers alive", false},
		{"worker-fds-flat-with-lingering-workers", "3.1-dev10-4931d1ca5", "sockets of a new worker: 3 with no old worker held, 3 with 3 workers alive", true},
		{"mcli-show-proc-lists-every-worker", "3.4-dev6-4e937e039", "workers alive (the master's children): 211; listed by show proc: 210 rows, 210 distinct; show proc bytes: 17618", false},
		{"mcli-show-proc-lists-every-worker", "3.4-dev6-10e78d924", "workers alive (the master's children): 211; listed by show proc: 211 rows, 211 distinct; show proc bytes: 17701", true},
	} {
		var judged bool
		for _, k := range Cases {
			if k.ID != c.id {
				continue
			}
			judged = true
			ok, why, err := k.Want(c.answer)
			if err != nil || ok != c.held {
				t.Errorf("%s on %s: held %v (%s, %v), want %v", c.id, c.build, ok, why, err, c.held)
			}
		}
		if !judged {
			t.Errorf("no case %s", c.id)
		}
	}
}

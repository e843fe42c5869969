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
		"facts-2.6.0-a1efc048b.json": {"master-env-processes-intact-after-reload", "mcli-relative-pid-checked", "mcli-severity-output-applies"},
		"facts-2.7.0-437fd289f.json": {"master-env-processes-intact-after-reload", "mcli-severity-output-applies"},
		"facts-2.8.0-fdd8154ed.json": {"exec-thread-groups-master-cli", "master-env-processes-no-null-version", "mcli-severity-output-applies"},
		"facts-2.9.0-fddb8c13b.json": {"master-env-processes-no-null-version", "mcli-severity-output-applies"},
		"facts-3.0.0-5590ada47.json": {"master-env-processes-no-null-version", "mcli-pipelined-after-expert-mode", "mcli-severity-output-applies"},
		"facts-3.1.0-f2b97918e.json": {"exec-daemon-failure-reported", "exec-daemon-master-failure-reported", "master-env-processes-no-null-version", "worker-keeps-master-session"},
		"facts-3.2.0-e134140d2.json": {"master-env-processes-no-null-version", "mcli-user-level-kept-through-pid-prefix"},
		"facts-3.3.0-7832fb21f.json": {"master-env-processes-no-null-version", "mcli-user-level-kept-through-pid-prefix"},
		"facts-3.4.0-64a335366.json": {},
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

package judge

import (
	"testing"

	"github.com/harp-project/harp/harness/core/cliout"
)

// reloadExits3517: the old worker 7 left cleanly, 8 crashed while leaving, and
// the current worker 9 died.
var reloadExits3517 = []cliout.WorkerExit{
	{PID: 7, Code: 0, Reason: "Exit"},
	{PID: 8, Code: 139, Reason: "Segmentation fault"},
	{PID: 9, Code: 134, Reason: "Aborted", Current: true},
}

func TestReloadEnds(t *testing.T) {
	exits := reloadExits3517
	crash, died := ReloadEnds(exits, 8)
	if crash != "old worker 8 exited with code 139 (Segmentation fault) during soft-stop" || died != "current worker 9 exited with code 134 (Aborted)" {
		t.Errorf("ReloadEnds = %q, %q", crash, died)
	}
	if crash, died := ReloadEnds(exits[:1], 7); crash != "" || died != "" {
		t.Errorf("an old worker leaving cleanly: %q, %q", crash, died)
	}
}

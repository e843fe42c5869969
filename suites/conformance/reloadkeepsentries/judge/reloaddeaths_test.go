package judge

import (
	"testing"

	"github.com/harp-project/harp/harness/core/cliout"
	"github.com/harp-project/harp/harness/core/obs"
)

// reloadExits: the old worker 7 left cleanly, 8 crashed while leaving, and
// the current worker 9 died.
var reloadExits = []cliout.WorkerExit{
	{PID: 7, Code: 0, Reason: "Exit"},
	{PID: 8, Code: 139, Reason: "Segmentation fault"},
	{PID: 9, Code: 134, Reason: "Aborted", Current: true},
}

func TestReloadDeaths(t *testing.T) {
	died, crash := ReloadDeaths(reloadExits, 8)
	if d, ok := died.Get(); !ok || d != (obs.Exit{Process: "the new worker 9", Code: 134, Signal: "Aborted"}) || crash != "exited with code 139 (Segmentation fault) during soft-stop" {
		t.Errorf("ReloadDeaths = %+v, %q", died, crash)
	}
	// Nothing died: the death is never made (the judge does not need it).
	if died, crash := ReloadDeaths(reloadExits[:1], 7); died.State != "" || crash != "" {
		t.Errorf("an old worker leaving cleanly: %+v, %q", died, crash)
	}
}

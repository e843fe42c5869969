package cliout

import (
	"testing"
)

// reloadExits: the old worker 7 left cleanly, 8 crashed while leaving, and
// the current worker 9 died.
var reloadExits = []WorkerExit{
	{PID: 7, Code: 0, Reason: "Exit"},
	{PID: 8, Code: 139, Reason: "Segmentation fault"},
	{PID: 9, Code: 134, Reason: "Aborted", Current: true},
}

func TestReloadExits(t *testing.T) {
	exits := reloadExits
	died, crash := ReloadExits(exits, 8)
	if died == nil || died.PID != 9 || crash == nil || crash.PID != 8 || crash.Ended() != "exited with code 139 (Segmentation fault)" {
		t.Errorf("ReloadExits = %+v, %+v", died, crash)
	}
	// An old worker that left cleanly, or exited with an error code: no crash.
	if died, crash := ReloadExits([]WorkerExit{exits[0], {PID: 7, Code: 1, Reason: "Exit"}}, 7); died != nil || crash != nil {
		t.Errorf("an old worker leaving without a signal: %+v, %+v", died, crash)
	}
}

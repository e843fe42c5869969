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

func TestReloadEnds(t *testing.T) {
	exits := reloadExits
	crash, died := ReloadEnds(exits, 8)
	if crash != "old worker 8 exited with code 139 (Segmentation fault) during soft-stop" || died != "current worker 9 exited with code 134 (Aborted)" {
		t.Errorf("ReloadEnds = %q, %q", crash, died)
	}
	if crash, died := ReloadEnds(exits[:1], 7); crash != "" || died != "" {
		t.Errorf("an old worker leaving cleanly: %q, %q", crash, died)
	}
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
	// The same reading as ReloadEnds'.
	if oldCrash, newDied := ReloadEnds(exits, 8); oldCrash != "old worker 8 "+crash.Ended()+" during soft-stop" || newDied != "current worker 9 "+died.Ended() {
		t.Errorf("ReloadEnds reads otherwise: %q, %q", oldCrash, newDied)
	}
}

package cliout

import "testing"

func TestReloadEnds(t *testing.T) {
	exits := []WorkerExit{
		{PID: 7, Code: 0, Reason: "Exit"},
		{PID: 8, Code: 139, Reason: "Segmentation fault"},
		{PID: 9, Code: 134, Reason: "Aborted", Current: true},
	}
	crash, died := ReloadEnds(exits, 8)
	if crash != "old worker 8 exited with code 139 (Segmentation fault) during soft-stop" || died != "current worker 9 exited with code 134 (Aborted)" {
		t.Errorf("ReloadEnds = %q, %q", crash, died)
	}
	if crash, died := ReloadEnds(exits[:1], 7); crash != "" || died != "" {
		t.Errorf("an old worker leaving cleanly: %q, %q", crash, died)
	}
}

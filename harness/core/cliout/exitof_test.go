package cliout

import "testing"

func TestExitOf(t *testing.T) {
	exits := []WorkerExit{{PID: 7, Code: 0}, {PID: 9, Code: 134}, {PID: 7, Code: 139}}
	if e, ok := ExitOf(exits, 7); !ok || e.Code != 139 {
		t.Errorf("ExitOf(7) = %+v, %v; want the last exit of 7 (code 139)", e, ok)
	}
	if e, ok := ExitOf(exits, 8); ok {
		t.Errorf("ExitOf(8) = %+v, true; want none", e)
	}
}

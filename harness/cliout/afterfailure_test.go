package cliout

import "testing"

func TestAfterFailure(t *testing.T) {
	kept := Procs{Master: Proc{Failed: 2}, Workers: []Proc{{PID: 9}}}
	if a := kept.AfterFailure(1, 9); a != (AfterFailure{Failed: 2, Counted: true, OldListed: true}) {
		t.Errorf("kept: %+v", a)
	}
	// 3.1 and later list the worker that keeps serving among the old ones.
	old := Procs{Master: Proc{Failed: 1}, OldWorkers: []Proc{{PID: 9}}}
	if a := old.AfterFailure(1, 9); a != (AfterFailure{Failed: 1, OldListed: true}) {
		t.Errorf("among the old: %+v", a)
	}
	replaced := Procs{Master: Proc{Failed: 0}, Workers: []Proc{{PID: 18}}}
	if a := replaced.AfterFailure(0, 9); a != (AfterFailure{NewWorker: 18}) {
		t.Errorf("replaced: %+v", a)
	}
}

package runtimelimits

import (
	"testing"
	"time"

	"github.com/harp-project/harp/harness/cliout"
)

func TestJudge(t *testing.T) {
	base := func() Facts {
		return Facts{Kind: "frontend maxconn 0 and back", Cycles: 2, CLIBound: 3 * time.Second, WorkerBefore: 8, WorkerAfter: 8,
			CLI:     []CLICall{{Command: "set maxconn frontend web 0", Took: time.Millisecond}, {Command: "set maxconn frontend web 200", Took: 2 * time.Millisecond}},
			Resumed: []bool{true, true}}
	}
	with := func(change func(*Facts)) Facts { f := base(); change(&f); return f }
	for _, c := range []struct {
		name             string
		f                Facts
		violation, unmet string
	}{
		{"held", base(), "", ""},
		{"a hang: the CLI stuck, the watchdog fired, the worker died", with(func(f *Facts) {
			f.CLI[1] = CLICall{Command: "set maxconn frontend web 200", Took: 3 * time.Second, Err: "i/o timeout"}
			f.Resumed = []bool{true}
			f.Stalls = []cliout.Stall{{Thread: 1, Ms: 1100}, {Thread: 2, Ms: 2000}}
			f.Panics = []cliout.Panic{{Thread: 1, Line: "PANIC! Thread 1 is about to kill the process"}}
			f.Died, f.WorkerAfter = "worker 8 exited with code 134 (Aborted)", 0
		}), `frontend maxconn 0 and back: "set maxconn frontend web 200" did not answer within 3s (i/o timeout); the watchdog killed the worker (PANIC! Thread 1 is about to kill the process); 2 watchdog warnings (longest 2000 ms); worker 8 exited with code 134 (Aborted)`, ""},
		{"the watchdog killed the worker before the bound: the connection closed without a byte", with(func(f *Facts) {
			f.CLI[1] = CLICall{Command: "set maxconn frontend web 200", Took: 2104 * time.Millisecond, Err: `127.0.0.1:32775: the connection closed without an answer to "set maxconn frontend web 200"`}
			f.SecondAnswered = true // the other thread answers until the kill
			f.Panics = []cliout.Panic{{Thread: 1, Line: "PANIC! Thread 1 is about to kill the process"}}
			f.Died = "worker 8 exited with code 134 (Aborted)"
		}), `frontend maxconn 0 and back: "set maxconn frontend web 200" was not answered: the connection closed 2.1s after it was sent; the watchdog killed the worker (PANIC! Thread 1 is about to kill the process); worker 8 exited with code 134 (Aborted)`, ""},
		{"traffic never came back", with(func(f *Facts) { f.Resumed = []bool{true, false} }),
			"frontend maxconn 0 and back: traffic did not resume within 5s after the limit was raised in 1 of 2 cycles", ""},
		{"a refused command says nothing about hangs", with(func(f *Facts) { f.CLI[0].Answer = "Value out of range." }),
			"", `frontend maxconn 0 and back: this build answers "set maxconn frontend web 0" with "Value out of range.": the round cannot pause the listeners that way`},
		{"no traffic before the round", with(func(f *Facts) { f.Setup = "the frontend never served a request before the round (10 s)" }),
			"", "frontend maxconn 0 and back: the frontend never served a request before the round (10 s)"},
		{"a command slow to answer while another answers at once is not a hang", with(func(f *Facts) {
			f.CLI[1] = CLICall{Command: "set maxconn frontend web 200", Took: 3 * time.Second, Err: "i/o timeout"}
			f.SecondAnswered = true
		}), "", `frontend maxconn 0 and back: "set maxconn frontend web 200" did not answer within 3s (i/o timeout), but a second command was answered at once: slow, not stuck (a loaded machine?)`},
		{"a limit that never applied tests nothing", with(func(f *Facts) { f.NotApplied = `after "set maxconn global 0" the admin socket shows Maxconn=4096` }),
			"", `frontend maxconn 0 and back: the limit did not take effect: after "set maxconn global 0" the admin socket shows Maxconn=4096`},
		{"a replaced worker", with(func(f *Facts) { f.WorkerAfter = 12 }), "frontend maxconn 0 and back: the current worker changed from 8 to 12", ""},
	} {
		v, u := Judge(c.f)
		if v != c.violation || u != c.unmet {
			t.Errorf("%s:\n got  %q, %q\n want %q, %q", c.name, v, u, c.violation, c.unmet)
		}
	}
}

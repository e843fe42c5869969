package cliout

import (
	"testing"
)

func TestParseWatchdog(t *testing.T) {
	logs := "[WARNING]  (8) : WARNING! thread 2 has stopped processing traffic for 300 milliseconds\n" +
		"PANIC! Thread 2 is about to kill the process (pid 8).\n" +
		"[ALERT]    (1) : Current worker (8) exited with code 134 (Aborted)\n" +
		"[ALERT]    (1) : exit-on-failure: killing every processes with SIGTERM\n" +
		"[WARNING]  (1) : All workers exited. Exiting... (134)\n"
	w := ParseWatchdog(logs)
	if len(w.Stalls) != 1 || w.Stalls[0].Ms != 300 || len(w.Panics) != 1 || len(w.WorkerExits) != 1 || !w.MasterExited || w.MasterCode != 134 {
		t.Fatalf("%+v", w)
	}
	if got := w.Crashed(); got != "1 panics, [ALERT]    (1) : Current worker (8) exited with code 134 (Aborted), master exited (134)" {
		t.Errorf("Crashed = %q", got)
	}
	if got := ParseWatchdog("[NOTICE]   (1) : New worker (8) forked\n").Crashed(); got != "" {
		t.Errorf("quiet output: Crashed = %q", got)
	}
}

func TestWarnsOnStalls(t *testing.T) {
	for v, want := range map[string]bool{"3.4.7-1": true, "3.1.0": true, "3.0.11-9e587df": false, "2.6.12-1+deb12u3": false, "4.0": true, "dev": false} {
		if WarnsOnStalls(v) != want {
			t.Errorf("WarnsOnStalls(%q) = %v", v, !want)
		}
	}
}

package judge

import (
	"reflect"
	"testing"

	"github.com/harp-project/harp/harness/core/cliout"
	"github.com/harp-project/harp/harness/core/obs"
)

func TestAftermath(t *testing.T) {
	calm := Aftermath{WorkerBefore: 8, WorkerAfter: 8, Master: obs.Opt(obs.Value(obs.Exit{}))}
	for _, c := range []struct {
		name     string
		a        Aftermath
		watchdog bool
		want     []string
	}{
		{"the worker stayed", calm, false, nil},
		{"show proc unread after: no replacement known", Aftermath{WorkerBefore: 8}, false, nil},
		{"replaced", Aftermath{WorkerBefore: 8, WorkerAfter: 12}, false, []string{"the current worker changed from 8 to 12"}},
		{"killed by the watchdog, the master gone with it", Aftermath{WorkerBefore: 8, WorkerAfter: 12,
			Stalls: []cliout.Stall{{Thread: 1, Ms: 1100}, {Thread: 2, Ms: 2000}},
			Panics: []cliout.Panic{{Thread: 1, Line: "PANIC! Thread 1 is about to kill the process"}},
			Master: obs.Opt(obs.Value(obs.Exit{Process: "master", Code: 134, Signal: "SIGABRT"})),
			Died:   "worker 8 exited with code 134 (Aborted)"}, true,
			[]string{"the watchdog killed the worker (PANIC! Thread 1 is about to kill the process)", "2 watchdog warnings (longest 2000 ms)", "master exited on SIGABRT", "worker 8 exited with code 134 (Aborted)"}},
		{"a death alone is the watchdog's", Aftermath{WorkerBefore: 8, Died: "worker 8 exited with code 134 (Aborted)"}, true, []string{"worker 8 exited with code 134 (Aborted)"}},
	} {
		if got := c.a.Violations(); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: Violations %q, want %q", c.name, got, c.want)
		}
		if got := c.a.Watchdog(); got != c.watchdog {
			t.Errorf("%s: Watchdog %v, want %v", c.name, got, c.watchdog)
		}
	}
	var a Aftermath
	a.NotRead("the worker's output after %s: %v", "the round", "docker logs: timeout")
	a.NotRead("the current worker after the round: %v", "i/o timeout")
	if a.Unread.Unknown() != "the worker's output after the round: docker logs: timeout" {
		t.Errorf("NotRead keeps the first failure: %q", a.Unread.Unknown())
	}
}

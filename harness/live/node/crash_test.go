package node

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/harp-project/harp/harness/core/verdict"
)

// The master's log of Debian 2.6.12 after a reload with three peers
// sections (captured by harp): the old worker died in deinit.
const oldWorkerSegv = `[NOTICE]   (1) : New worker (9) forked
[NOTICE]   (1) : Loading success.
[NOTICE]   (1) : Reloading HAProxy
[NOTICE]   (1) : New worker (12) forked
[NOTICE]   (1) : Loading success.
[WARNING]  (9) : Proxy <HTTPCLIENT> stopped (cumulated conns: FE: 0, BE: 0).
[NOTICE]   (1) : haproxy version is 2.6.12-1+deb12u4
[NOTICE]   (1) : path to executable is /usr/sbin/haproxy
[WARNING]  (1) : Former worker (9) exited with code 139 (Segmentation fault)
[ALERT]    (1) : Current worker (12) exited with code 134 (Aborted)
[WARNING]  (1) : Former worker (7) exited with code 0 (Exit)
`

func TestDiedOnSignal(t *testing.T) {
	cs := diedOnSignal("node-3517", oldWorkerSegv, 139)
	if len(cs) != 3 {
		t.Fatalf("an old worker, a worker and the master died on a signal (an exit 0 is no crash): %+v", cs)
	}
	want := []struct {
		pid  int
		kind string
	}{{9, "old worker"}, {12, "worker"}, {1, "master"}}
	for i, w := range want {
		if cs[i].PID != w.pid || cs[i].Process != w.kind {
			t.Errorf("crash %d: got pid %d %q, want %d %q", i, cs[i].PID, cs[i].Process, w.pid, w.kind)
		}
	}
	if cs[2].Signal != "Segmentation fault" || !strings.Contains(cs[0].LastLog, "Former worker (9)") {
		t.Errorf("signal and log tail: %+v", cs[2])
	}
}

func TestCoreOwner(t *testing.T) {
	crashes := []verdict.Crash{{PID: 9}, {PID: 7}, {PID: 8}}
	if pid, ok := coreOwner("core.7", "", crashes); !ok || pid != 7 {
		t.Errorf("core.<pid> (core_uses_pid) is its pid's: %d %v", pid, ok)
	}
	bt, err := os.ReadFile("../../core/verdict/testdata/gdb-2.6.12-fd-delete-orphan.txt")
	if err != nil {
		t.Fatal(err)
	}
	// A plain core (core_uses_pid 0) is the process whose pid is one of its
	// threads' ids: LWP 9, the first crash, not the last.
	if pid, ok := coreOwner("core", string(bt), crashes); !ok || pid != 9 {
		t.Errorf("the core's LWP names its process: %d %v", pid, ok)
	}
	if _, ok := coreOwner("core", "[New LWP 42]", crashes); ok {
		t.Error("a core whose threads are no crashed process is nobody's")
	}
}

// A local master (make bench's baseline) that dies on a signal reads as
// 128+signal, as a container's does: Go's ExitCode says -1 for it.
func TestLocalMasterSignalExitCode(t *testing.T) {
	b := &processRuntime{args: []string{"sh", "-c", "kill -SEGV $$"}}
	if err := b.start(); err != nil {
		t.Skip(err)
	}
	_, done := b.current()
	<-done
	running, code, err := b.state(context.Background())
	if running || err != nil || code != 139 || !dumpsCore(code) {
		t.Errorf("state = %v %d %v, want stopped with 139", running, code, err)
	}
}

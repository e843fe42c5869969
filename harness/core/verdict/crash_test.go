package verdict

import (
	"os"
	"strings"
	"testing"
)

func fixture(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

const fdDeleteOrphan = "_fd_delete_orphan <- sock_unbind <- do_unbind_listener <- unbind_listener"

func TestSignature(t *testing.T) {
	cases := []struct{ name, file, want string }{
		// Captured by harp (gdb 13, before the crashing thread was marked)
		// from Debian 2.6.12's old worker after a reload with three peers
		// sections: exported names only, no symbols.
		{"2.6.12 without symbols", "testdata/gdb-2.6.12-fd-delete-orphan.txt", fdDeleteOrphan},
		// The same crash with symbols, 4 threads, the crashing one marked:
		// other addresses, arguments and lines, the same signature.
		{"2.6.12 with symbols, marked thread", "testdata/gdb-2.6.12-fd-delete-orphan-symbols-4threads.txt", fdDeleteOrphan},
		// A watchdog panic: libc's abort and the handler deliver it; the
		// signature is where the thread was stuck, clone suffix dropped.
		{"watchdog", "testdata/gdb-watchdog-panic.txt", "process_peer_sync <- run_tasks_from_lists <- process_runnable_tasks <- run_poll_loop"},
		// ASan: the first stack (where the error happened), not the freeing one.
		{"asan use after free", "../cliout/testdata/asan-use-after-free.log", "cli_parse_enable_frontend <- cli_parse_request <- cli_io_handler <- task_process_applet"},
	}
	for _, c := range cases {
		if got := Signature(fixture(t, c.file)); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}

func TestSignatureEdges(t *testing.T) {
	doubleFree := `==9==ERROR: AddressSanitizer: attempting double-free on 0x602000001170 in thread T0:
    #0 0x7f3c1b2b76a8 in __interceptor_free ../../../../src/libsanitizer/asan/asan_malloc_linux.cpp:52
    #1 0x55d1c0b2a4d1 in pool_free_area src/pool.c:412
    #2 0x55d1c0b2a5e2 in stktable_free src/stick_table.c:120

freed by thread T0 here:
    #0 0x7f3c1b2b76a8 in __interceptor_free ../../../../src/libsanitizer/asan/asan_malloc_linux.cpp:52
    #1 0x55d1c0b2b000 in other src/x.c:1
`
	if got := Signature(doubleFree); got != "pool_free_area <- stktable_free" {
		t.Errorf("the sanitizer's interceptor delivers the error: got %q", got)
	}
	noSymbols := "#0  0x000055d1c0b2a4d1 in ?? ()\n#1  0x000055d1c0b2a5e2 in ?? ()\n"
	if got := Signature(noSymbols); got != "" {
		t.Errorf("frames without a name sign nothing (their addresses move): got %q", got)
	}
	if got := Signature(""); got != "" {
		t.Errorf("no text: got %q", got)
	}
	abort := "#0  0x00007f in raise () from /lib/x86_64-linux-gnu/libc.so.6\n#1  0x00007f in abort () from /lib/x86_64-linux-gnu/libc.so.6\n#2  0x000055 in ha_crash_now ()\n#3  0x000055 in stktable_touch_with_exp ()\n"
	if got := Signature(abort); got != "ha_crash_now <- stktable_touch_with_exp" {
		t.Errorf("a BUG_ON's abort: got %q", got)
	}
}

func TestCrashVerdict(t *testing.T) {
	segv := Crash{Node: "node-3517", PID: 9, Code: 139, Signal: "Segmentation fault", Suite: "3517", Process: "old worker", Signature: fdDeleteOrphan}
	segv2 := segv
	segv2.Node, segv2.PID = "node-3517-2", 8
	abrt := Crash{Node: "node2", PID: 1, Code: 134, Signal: "Aborted", Suite: "conf-x", Process: "master"}

	v, n, reason := CrashVerdict([]Crash{segv, segv2, abrt}, CrashWatch{Nodes: 6}, 4)
	if v != Reproduced || n != 2 {
		t.Fatalf("crashes are a violation in every suite run that met them: %s %d (%s)", v, n, reason)
	}
	for _, want := range []string{"3 HAProxy processes died in 2 of 4 suite runs", "2 old workers: Segmentation fault in " + fdDeleteOrphan + " (#3517)", "1 master: Aborted (no signature"} {
		if !strings.Contains(reason, want) {
			t.Errorf("reason %q lacks %q", reason, want)
		}
	}

	v, _, reason = CrashVerdict([]Crash{segv}, CrashWatch{Nodes: 2, Failed: []string{"node2 of #x: reading its logs: EOF"}}, 2)
	if v != Reproduced || !strings.Contains(reason, "crash collection failed on 1 of 3 nodes") {
		t.Errorf("a crash seen stays a crash when another node could not be read: %s (%s)", v, reason)
	}

	v, _, reason = CrashVerdict(nil, CrashWatch{Nodes: 2, Failed: []string{"node2 of #x: reading its logs: EOF"}}, 2)
	if v != Inconclusive || !strings.Contains(reason, "node2 of #x: reading its logs: EOF") {
		t.Errorf("a node harp could not read may have crashed unseen: %s (%s)", v, reason)
	}

	if v, _, reason = CrashVerdict(nil, CrashWatch{Nodes: 1}, 1); reason != "no HAProxy process died in 1 suite run (1 node checked)" {
		t.Errorf("one run, one node: %q", reason)
	}
	if v, _, reason = CrashVerdict(nil, CrashWatch{}, 3); v != Inconclusive {
		t.Errorf("no node checked is no pass: %s (%s)", v, reason)
	}

	v, _, reason = CrashVerdict(nil, CrashWatch{Nodes: 5}, 3)
	if v != Pass || reason != "no HAProxy process died in 3 suite runs (5 nodes checked)" {
		t.Errorf("none seen with every node read: %s (%s)", v, reason)
	}
}

func TestWithCrashes(t *testing.T) {
	segv := Crash{Node: "node-3517", PID: 9, Signal: "Segmentation fault", Process: "old worker", Signature: fdDeleteOrphan}
	asan := Crash{Node: "n", PID: 8, Signal: "Aborted", ASan: "==8==ERROR", ASanSummary: "heap-use-after-free"}
	got := WithCrashes("reading node2's table kept failing", []Crash{segv, asan})
	if got != "reading node2's table kept failing; HAProxy crashed (see the crash row): 1 old worker: Segmentation fault in "+fdDeleteOrphan {
		t.Errorf("got %q", got)
	}
	if WithCrashes("r", []Crash{asan}) != "r" {
		t.Error("an ASan crash is WithMemoryErrors' to name")
	}
}

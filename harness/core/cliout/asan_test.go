package cliout

import (
	"os"
	"strings"
	"testing"
)

// A real ASan build's output (3.0.11, flavor=asan, mutant 9): the
// worker's report, then the master's lines on its exit (the end of
// the node's output as harp recorded it).
func TestParseASan(t *testing.T) {
	raw, err := os.ReadFile("testdata/asan-use-after-free.log")
	if err != nil {
		t.Fatal(err)
	}
	rs := ParseASan(string(raw))
	if len(rs) != 1 {
		t.Fatalf("%d reports, want 1", len(rs))
	}
	r := rs[0]
	if r.PID != 8 || r.Kind != "heap-use-after-free" || r.Summary != "heap-use-after-free src/proxy.c:3086 in cli_parse_enable_frontend" {
		t.Errorf("report: pid %d, kind %q, summary %q", r.PID, r.Kind, r.Summary)
	}
	if !strings.Contains(r.Text, "freed by thread T0 here:") || !strings.HasSuffix(r.Text, "==8==ABORTING") || strings.Contains(r.Text, "Current worker (8) exited") {
		t.Errorf("the report runs from ERROR to ABORTING, stacks included:\n%s", r.Text)
	}
	// Another process's lines in between stay out of nothing; a report
	// cut short (the output ends) is kept as far as it goes.
	cut := "==12==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x1\nWRITE of size 4\n[NOTICE] (1) : something\n    #0 0x1 in f src/x.c:1\n"
	rs = ParseASan("[NOTICE] (1) : start\n" + cut)
	if len(rs) != 1 || rs[0].PID != 12 || rs[0].Kind != "heap-buffer-overflow" || !strings.Contains(rs[0].Text, "src/x.c:1") {
		t.Errorf("a report cut short: %+v", rs)
	}
	if rs := ParseASan("[NOTICE] (1) : haproxy version is 3.0.11\n"); len(rs) != 0 {
		t.Errorf("no report: %+v", rs)
	}
}

package node

import (
	"strings"
	"testing"

	"github.com/harp-project/harp/harness/core/cliout"
	"github.com/harp-project/harp/harness/core/verdict"
)

func TestWithASan(t *testing.T) {
	crashes := []verdict.Crash{{Node: "n", PID: 8, Code: 134, Signal: "Aborted"}}
	reports := []cliout.ASanReport{{PID: 8, Kind: "heap-use-after-free", Summary: "heap-use-after-free src/proxy.c:3086 in f", Text: "==8==ERROR: ..."},
		{PID: 9, Kind: "double-free", Text: "==9==ERROR: AddressSanitizer: attempting double-free"}}
	out := withASan(crashes, reports, "n", "log")
	if len(out) != 2 || out[0].ASanSummary != "heap-use-after-free src/proxy.c:3086 in f" || !strings.Contains(out[0].Note, "no core") {
		t.Fatalf("the report goes to its worker's crash: %+v", out)
	}
	if out[1].PID != 9 || out[1].Signal != "AddressSanitizer: double-free" || out[1].ASan == "" {
		t.Errorf("a report without a crash is a crash of its own: %+v", out[1])
	}
}

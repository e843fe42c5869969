package cpus

import (
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

func TestParse(t *testing.T) {
	got, err := Parse("0-3,6,2")
	if err != nil || Format(got) != "0,1,2,3,6" {
		t.Errorf("Parse: %v %v", got, err)
	}
	for _, bad := range []string{"3-1", "x", "-1", "1,,2"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if all, _ := Parse(""); len(all) != len(All()) || len(all) > runtime.NumCPU() {
		t.Errorf("every CPU: %v", all)
	}
	if w := Without([]int{0, 1, 2, 3}, []int{0, 1}); Format(w) != "2,3" {
		t.Errorf("Without: %v", w)
	}
}

func TestPin(t *testing.T) {
	first := All()[0]
	restore, err := Pin([]int{first})
	if err != nil {
		t.Fatal(err)
	}
	var set unix.CPUSet
	unix.SchedGetaffinity(0, &set)
	if set.Count() != 1 || !set.IsSet(first) {
		t.Errorf("pinned to %d CPUs", set.Count())
	}
	restore()
	unix.SchedGetaffinity(0, &set)
	if set.Count() != len(All()) {
		t.Errorf("restored to %d CPUs, want %d", set.Count(), len(All()))
	}
}

// Package cpus handles CPU lists ("0-3,6") and pins this process to some
// CPUs, so that harp's own load generator does not compete with the
// HAProxy it measures.
package cpus

import (
	"fmt"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Parse reads a cpuset such as "0-3,6"; "" is every CPU of the machine.
func Parse(set string) ([]int, error) {
	if set == "" {
		return All(), nil
	}
	seen := map[int]bool{}
	for _, part := range strings.Split(set, ",") {
		a, b, isRange := strings.Cut(part, "-")
		lo, err1 := strconv.Atoi(a)
		hi, err2 := lo, error(nil)
		if isRange {
			hi, err2 = strconv.Atoi(b)
		}
		if err1 != nil || err2 != nil || lo < 0 || hi < lo {
			return nil, fmt.Errorf("cpuset %q: want CPUs such as 0-3,6", set)
		}
		for c := lo; c <= hi; c++ {
			seen[c] = true
		}
	}
	var out []int
	for c := range seen {
		out = append(out, c)
	}
	sort.Ints(out)
	return out, nil
}

// All is every CPU this process may run on (its affinity: a container or
// taskset may allow fewer than the machine has, and not from 0).
func All() []int {
	var set unix.CPUSet
	var out []int
	if unix.SchedGetaffinity(0, &set) == nil {
		for c := range 1024 {
			if set.IsSet(c) {
				out = append(out, c)
			}
		}
	}
	if len(out) == 0 {
		for c := range runtime.NumCPU() {
			out = append(out, c)
		}
	}
	return out
}

// Without is all minus used.
func Without(all, used []int) []int {
	var out []int
	for _, c := range all {
		if !contains(used, c) {
			out = append(out, c)
		}
	}
	return out
}

func contains(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// Format writes a CPU list as a cpuset ("0,1,2").
func Format(cs []int) string {
	var parts []string
	for _, c := range cs {
		parts = append(parts, strconv.Itoa(c))
	}
	return strings.Join(parts, ",")
}

// Pin restricts every thread of this process to the CPUs (threads created
// later inherit it) and returns how to undo it.
func Pin(cs []int) (restore func(), err error) {
	var set, old unix.CPUSet
	for _, c := range cs {
		set.Set(c)
	}
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		return nil, fmt.Errorf("reading this process's CPU affinity: %w", err)
	}
	if err := eachThread(func(tid int) error { return unix.SchedSetaffinity(tid, &set) }); err != nil {
		return nil, fmt.Errorf("pinning this process to CPUs %s: %w", Format(cs), err)
	}
	return func() { eachThread(func(tid int) error { return unix.SchedSetaffinity(tid, &old) }) }, nil
}

func eachThread(f func(tid int) error) error {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return err
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		if err := f(tid); err != nil && err != unix.ESRCH { // a thread that ended meanwhile
			return err
		}
	}
	return nil
}

package cliout

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Every build's master, as harp capture read it from /proc.
func TestParseProcStatus(t *testing.T) {
	for v, dir := range captures(t) {
		raw, err := os.ReadFile(filepath.Join(dir, "master-status.txt"))
		if err != nil {
			t.Fatal(err)
		}
		s, err := ParseProcStatus(string(raw))
		if err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		// A master that takes reloads catches USR2 and CHLD and blocks neither.
		if s.State == "" || s.Threads < 1 || !Has(s.SigCgt, syscall.SIGUSR2) || !Has(s.SigCgt, syscall.SIGCHLD) || Has(s.SigBlk, syscall.SIGUSR2) {
			t.Errorf("%s: parsed %+v", v, s)
		}
	}
	if got := Signals(0x800); got != "USR2" {
		t.Errorf("Signals(0x800) = %q", got)
	}
	if _, err := ParseProcStatus("Name: x\nSigBlk: zz\n"); err == nil {
		t.Error("a bad mask was accepted")
	}
	if _, err := ParseProcStatus("Name: x\n"); err == nil {
		t.Error("a status without masks was accepted")
	}
}

// 3.0 prints its watchdog's panic without the "PANIC!" prefix later
// builds add (src/debug.c of 3.0.11).
func TestPanicLineOf30(t *testing.T) {
	ps := ParsePanics("  Thread 2 : id=0x7f\nThread 2 is about to kill the process.\n")
	if len(ps) != 1 || ps[0].Thread != 2 {
		t.Fatalf("3.0's panic line not found: %+v", ps)
	}
}

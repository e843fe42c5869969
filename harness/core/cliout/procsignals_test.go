package cliout

import (
	"syscall"
	"testing"
)

func TestProcSignals(t *testing.T) {
	usr2 := uint64(1) << (uint(syscall.SIGUSR2) - 1)
	s := ProcStatus{State: "S (sleeping)", SigBlk: usr2, ShdPnd: usr2}
	if !s.Blocks(syscall.SIGUSR2) || !s.Pends(syscall.SIGUSR2) || s.Blocks(syscall.SIGHUP) {
		t.Errorf("Blocks/Pends of %+v", s)
	}
	if got := s.ReloadSignal(); got != (ReloadSignal{Blocked: true, Pending: true}) {
		t.Errorf("ReloadSignal of %+v = %+v", s, got)
	}
	if got := (ProcStatus{SigPnd: usr2}).ReloadSignal(); got != (ReloadSignal{Pending: true}) || got.Text() != "SIGUSR2 is left pending on the master" {
		t.Errorf("SIGUSR2 pending for the thread: %+v (%q)", got, got.Text())
	}
	if got := s.ReloadSignal().Text(); got != "the master blocks SIGUSR2" {
		t.Errorf("blocked and pending: %q, want the block first", got)
	}
	if got := (ProcStatus{}).ReloadSignal().Text(); got != "" {
		t.Errorf("taken: %q", got)
	}
	if got := s.SignalText(); got != "S (sleeping), blocked USR2, pending USR2" {
		t.Errorf("SignalText = %q", got)
	}
	if got := (ProcStatus{State: "R (running)"}).SignalText(); got != "R (running), blocked none, pending none" {
		t.Errorf("SignalText = %q", got)
	}
}

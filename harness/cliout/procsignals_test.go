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
	if got := s.SignalText(); got != "S (sleeping), blocked USR2, pending USR2" {
		t.Errorf("SignalText = %q", got)
	}
	if got := (ProcStatus{State: "R (running)"}).SignalText(); got != "R (running), blocked none, pending none" {
		t.Errorf("SignalText = %q", got)
	}
}

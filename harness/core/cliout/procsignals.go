package cliout

import (
	"fmt"
	"syscall"
)

// Blocks says whether the process blocks sig.
func (s ProcStatus) Blocks(sig syscall.Signal) bool { return Has(s.SigBlk, sig) }

// Pends says whether sig is pending, for the thread or the process.
func (s ProcStatus) Pends(sig syscall.Signal) bool { return Has(s.SigPnd|s.ShdPnd, sig) }

// SignalText is the state and the blocked and pending signals, for a note:
// "S (sleeping), blocked none, pending USR2".
func (s ProcStatus) SignalText() string {
	return fmt.Sprintf("%s, blocked %s, pending %s", s.State, Signals(s.SigBlk), Signals(s.SigPnd|s.ShdPnd))
}

// ReloadSignal is whether a master takes SIGUSR2, the signal that asks it
// to reload, as its /proc status shows: one that blocks it, or leaves it
// pending, reloads on it no more.
type ReloadSignal struct {
	Blocked bool `json:"usr2_blocked"`
	Pending bool `json:"usr2_pending"`
}

// ReloadSignal is the status's SIGUSR2 state.
func (s ProcStatus) ReloadSignal() ReloadSignal {
	return ReloadSignal{Blocked: s.Blocks(syscall.SIGUSR2), Pending: s.Pends(syscall.SIGUSR2)}
}

// Text says what keeps the master from reloading on SIGUSR2, for a
// violation: "the master blocks SIGUSR2", else "SIGUSR2 is left pending
// on the master"; "" when it takes it.
func (r ReloadSignal) Text() string {
	switch {
	case r.Blocked:
		return "the master blocks SIGUSR2"
	case r.Pending:
		return "SIGUSR2 is left pending on the master"
	}
	return ""
}

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

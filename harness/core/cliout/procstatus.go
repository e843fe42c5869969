package cliout

import (
	"fmt"
	"strconv"
	"strings"
	"syscall"
)

// ProcStatus is what /proc/<pid>/status says of a process's signals and
// state.
type ProcStatus struct {
	State   string `json:"state"`   // "S (sleeping)"
	SigBlk  uint64 `json:"sig_blk"` // blocked
	SigIgn  uint64 `json:"sig_ign"` // ignored
	SigCgt  uint64 `json:"sig_cgt"` // caught
	SigPnd  uint64 `json:"sig_pnd"` // pending for the thread
	ShdPnd  uint64 `json:"shd_pnd"` // pending for the process
	Threads int    `json:"threads"`
	Raw     string `json:"-"`
}

// ParseProcStatus reads the fields of /proc/<pid>/status harp uses.
func ParseProcStatus(raw string) (ProcStatus, error) {
	s := ProcStatus{Raw: raw}
	seen := 0
	for _, line := range strings.Split(raw, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		var dst *uint64
		switch k {
		case "State":
			s.State = v
			continue
		case "Threads":
			s.Threads, _ = strconv.Atoi(v)
			continue
		case "SigBlk":
			dst = &s.SigBlk
		case "SigIgn":
			dst = &s.SigIgn
		case "SigCgt":
			dst = &s.SigCgt
		case "SigPnd":
			dst = &s.SigPnd
		case "ShdPnd":
			dst = &s.ShdPnd
		default:
			continue
		}
		n, err := strconv.ParseUint(v, 16, 64)
		if err != nil {
			return s, fmt.Errorf("/proc status %s: %q is not a signal mask", k, v)
		}
		*dst = n
		seen++
	}
	if seen < 5 {
		return s, fmt.Errorf("/proc status: only %d of its 5 signal masks found", seen)
	}
	return s, nil
}

// Has says whether a signal is in a mask.
func Has(mask uint64, sig syscall.Signal) bool { return mask&(1<<(uint(sig)-1)) != 0 }

// Signals names the signals of a mask ("USR2 CHLD").
func Signals(mask uint64) string {
	var names []string
	for sig := syscall.Signal(1); sig <= 64; sig++ {
		if Has(mask, sig) {
			name := strings.ToUpper(strings.TrimPrefix(unixName(sig), "SIG"))
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, " ")
}

func unixName(sig syscall.Signal) string {
	switch sig {
	case syscall.SIGHUP:
		return "HUP"
	case syscall.SIGINT:
		return "INT"
	case syscall.SIGQUIT:
		return "QUIT"
	case syscall.SIGKILL:
		return "KILL"
	case syscall.SIGUSR1:
		return "USR1"
	case syscall.SIGUSR2:
		return "USR2"
	case syscall.SIGPIPE:
		return "PIPE"
	case syscall.SIGALRM:
		return "ALRM"
	case syscall.SIGTERM:
		return "TERM"
	case syscall.SIGCHLD:
		return "CHLD"
	case syscall.SIGTTIN:
		return "TTIN"
	case syscall.SIGTTOU:
		return "TTOU"
	}
	return fmt.Sprint(int(sig))
}

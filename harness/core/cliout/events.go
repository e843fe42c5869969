package cliout

import (
	"regexp"
	"strconv"
	"strings"
)

// Stall is a watchdog warning (3.1 and later): a thread stopped
// processing traffic for a while.
type Stall struct {
	Thread int    `json:"thread"`
	Ms     int    `json:"ms"`
	Line   string `json:"line"`
	// LockHist is the stuck thread's lock history ("S:PEER U:PEER ..."),
	// printed by builds that keep one (3.2 and later); Trace the functions
	// of its call trace, innermost first.
	LockHist string   `json:"lock_hist,omitempty"`
	Trace    []string `json:"trace,omitempty"`
}

// Where says whether the stall's evidence points at the listener or proxy
// code (a function of its call trace is named for them), and whether the
// build printed enough to say (a lock history and a trace): without it,
// every stall counts.
func (s Stall) Where() (listenerPath, known bool) {
	if s.LockHist == "" || len(s.Trace) == 0 {
		return false, false
	}
	for _, f := range s.Trace {
		if strings.Contains(f, "listener") || strings.Contains(f, "proxy") {
			return true, true
		}
	}
	return false, true
}

// Panic is a watchdog (or other) panic line: the process is about to die.
type Panic struct {
	Thread int    `json:"thread"`
	PID    int    `json:"pid"`
	Line   string `json:"line"`
}

var (
	stallRe  = regexp.MustCompile(`WARNING! thread (\d+) has stopped processing traffic for (\d+) milliseconds`)
	panicRe  = regexp.MustCompile(`(?:PANIC! )?[Tt]hread (\d+) is about to kill the process(?: \(pid (\d+)\))?`)
	masterRe = regexp.MustCompile(`All workers exited\. Exiting\.\.\. \((\d+)\)`)
)

// ParseStalls finds the watchdog's "stopped processing traffic" warnings,
// with the lock history and call trace of the block each one opens.
func ParseStalls(logs string) []Stall {
	var out []Stall
	idx := stallRe.FindAllStringSubmatchIndex(logs, -1)
	for i, m := range idx {
		th, _ := strconv.Atoi(logs[m[2]:m[3]])
		ms, _ := strconv.Atoi(logs[m[4]:m[5]])
		end := len(logs)
		if i+1 < len(idx) {
			end = idx[i+1][0]
		}
		st := Stall{Thread: th, Ms: ms, Line: logs[m[0]:m[1]]}
		st.LockHist, st.Trace = stallBlock(logs[m[1]:end])
		out = append(out, st)
	}
	return out
}

var traceRe = regexp.MustCompile(`^\|\s*0x[0-9a-f]+ .*\]: ([A-Za-z_][A-Za-z0-9_.]*)\+`)

// stallBlock reads the stuck thread's lock history and call trace from
// the text after a warning line (up to the next warning, or a panic).
func stallBlock(block string) (lockHist string, trace []string) {
	threads := 0
	for _, line := range strings.Split(block, "\n") {
		l := strings.TrimSpace(line)
		if strings.HasPrefix(l, "* Thread") || strings.HasPrefix(l, ">Thread") {
			threads++
		}
		switch {
		// The stuck thread's dump ends at the next thread's, a panic or a
		// log line.
		case threads > 1 || strings.Contains(l, "PANIC") || strings.Contains(l, "about to kill") || strings.HasPrefix(l, "["):
			return lockHist, trace
		case strings.HasPrefix(l, "lock_hist:") && lockHist == "":
			lockHist = strings.TrimSpace(strings.TrimPrefix(l, "lock_hist:"))
		default:
			if m := traceRe.FindStringSubmatch(l); m != nil {
				trace = append(trace, m[1])
			}
		}
	}
	return lockHist, trace
}

// ParsePanics finds "PANIC! Thread N is about to kill the process" lines.
func ParsePanics(logs string) []Panic {
	var out []Panic
	for _, m := range panicRe.FindAllStringSubmatch(logs, -1) {
		th, _ := strconv.Atoi(m[1])
		pid, _ := strconv.Atoi(m[2])
		out = append(out, Panic{Thread: th, PID: pid, Line: m[0]})
	}
	return out
}

// MasterExit reads the master's own exit from its log ("All workers
// exited. Exiting... (134)"): its code, and whether it exited at all.
func MasterExit(logs string) (code int, exited bool) {
	m := masterRe.FindAllStringSubmatch(logs, -1)
	if len(m) == 0 {
		return 0, false
	}
	code, _ = strconv.Atoi(m[len(m)-1][1])
	return code, true
}

// MaxStall is the longest stall, 0 if none.
func MaxStall(stalls []Stall) int {
	max := 0
	for _, s := range stalls {
		if s.Ms > max {
			max = s.Ms
		}
	}
	return max
}

package cliout

import (
	"regexp"
	"strconv"
)

// Stall is a watchdog warning (3.1 and later): a thread stopped
// processing traffic for a while.
type Stall struct {
	Thread int    `json:"thread"`
	Ms     int    `json:"ms"`
	Line   string `json:"line"`
}

// Panic is a watchdog (or other) panic line: the process is about to die.
type Panic struct {
	Thread int    `json:"thread"`
	PID    int    `json:"pid"`
	Line   string `json:"line"`
}

var (
	stallRe  = regexp.MustCompile(`WARNING! thread (\d+) has stopped processing traffic for (\d+) milliseconds`)
	panicRe  = regexp.MustCompile(`PANIC! [Tt]hread (\d+) is about to kill the process(?: \(pid (\d+)\))?`)
	masterRe = regexp.MustCompile(`All workers exited\. Exiting\.\.\. \((\d+)\)`)
)

// ParseStalls finds the watchdog's "stopped processing traffic" warnings.
func ParseStalls(logs string) []Stall {
	var out []Stall
	for _, m := range stallRe.FindAllStringSubmatch(logs, -1) {
		th, _ := strconv.Atoi(m[1])
		ms, _ := strconv.Atoi(m[2])
		out = append(out, Stall{Thread: th, Ms: ms, Line: m[0]})
	}
	return out
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

package cliout

import (
	"fmt"
	"strings"
)

// Watchdog is what a stretch of HAProxy's output says of stalls and
// ends: the watchdog's warnings, panics, the workers that exited with a
// non-zero code, and the master's own exit.
type Watchdog struct {
	Stalls       []Stall
	Panics       []Panic
	WorkerExits  []string // exits with a non-zero code
	MasterExited bool
	MasterCode   int
}

// ParseWatchdog reads a Watchdog from logs (usually the output since a
// point: see node's LogsAfter).
func ParseWatchdog(logs string) Watchdog {
	w := Watchdog{Stalls: ParseStalls(logs), Panics: ParsePanics(logs)}
	w.WorkerExits = FailedExits(ParseWorkerExits(logs))
	w.MasterCode, w.MasterExited = MasterExit(logs)
	return w
}

// Crashed says how the output shows the process ending (its panics, the
// first failed worker exit, the master's exit), "" when it does not.
func (w Watchdog) Crashed() string {
	var bad []string
	if len(w.Panics) > 0 {
		bad = append(bad, fmt.Sprintf("%d panics", len(w.Panics)))
	}
	if len(w.WorkerExits) > 0 {
		bad = append(bad, w.WorkerExits[0])
	}
	if w.MasterExited {
		bad = append(bad, fmt.Sprintf("master exited (%d)", w.MasterCode))
	}
	return strings.Join(bad, ", ")
}

// WarnsOnStalls says whether a version emits the watchdog's "stopped
// processing traffic" warnings (3.1 and later).
func WarnsOnStalls(version string) bool {
	var major, minor int
	if _, err := fmt.Sscanf(version, "%d.%d", &major, &minor); err != nil {
		return false
	}
	return major > 3 || (major == 3 && minor >= 1)
}

package cliout

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Info is `show info`: "Name: value" lines.
type Info map[string]string

// Int reads a numeric field (0 when absent).
func (i Info) Int(key string) int64 {
	n, _ := strconv.ParseInt(i[key], 10, 64)
	return n
}

// ParseInfo reads `show info`.
func ParseInfo(out string) (Info, error) {
	info := Info{}
	for _, line := range strings.Split(out, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok || k == "" || strings.ContainsAny(k, " \t") {
			continue
		}
		info[k] = strings.TrimSpace(v)
	}
	if info["Name"] == "" || info["Version"] == "" {
		return nil, fmt.Errorf("not a `show info` answer: %q", firstLine(out))
	}
	return info, nil
}

// WorkerExit is a worker (or program) exit the master logged.
type WorkerExit struct {
	PID     int    `json:"pid"`
	Code    int    `json:"code"`
	Reason  string `json:"reason"`  // Exit, Aborted, Segmentation fault, ...
	Current bool   `json:"current"` // the serving worker died, not a former one
	Line    string `json:"line"`
}

var exitRe = regexp.MustCompile(`(Current|Former) worker (?:#\d+ )?\((\d+)\) exited with code (\d+)(?: \(([^)]*)\))?`)

// ParseWorkerExits reads the master's log lines, e.g.
// "[WARNING]  (1) : Former worker (8) exited with code 0 (Exit)".
func ParseWorkerExits(logs string) []WorkerExit {
	var out []WorkerExit
	for _, line := range strings.Split(logs, "\n") {
		m := exitRe.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		pid, _ := strconv.Atoi(m[2])
		code, _ := strconv.Atoi(m[3])
		out = append(out, WorkerExit{PID: pid, Code: code, Reason: m[4], Current: m[1] == "Current", Line: strings.TrimSpace(line)})
	}
	return out
}

// Ended is how the exit reads in a note: "exited with code 134 (Aborted)".
func (e WorkerExit) Ended() string { return fmt.Sprintf("exited with code %d (%s)", e.Code, e.Reason) }

// FailedExits are the master's lines for the exits with a non-zero code
// (nil when none).
func FailedExits(exits []WorkerExit) []string {
	var out []string
	for _, e := range exits {
		if e.Code != 0 {
			out = append(out, e.Line)
		}
	}
	return out
}

// Package cliout parses HAProxy runtime CLI output (show proc, show peers,
// show table, show info) and the master's log lines into typed values. The
// formats differ between versions; the tests run against output captured
// from every supported build (fixtures/captures).
package cliout

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Proc is one line of the master CLI's `show proc`.
type Proc struct {
	PID     int           `json:"pid"`
	Type    string        `json:"type"` // master, worker, or a program name
	Reloads int           `json:"reloads"`
	Failed  int           `json:"failed_reloads"` // master only, "[failed: N]"
	Uptime  time.Duration `json:"uptime_ns"`
	Version string        `json:"version"`
}

// Procs is the whole `show proc` answer.
type Procs struct {
	Master     Proc   `json:"master"`
	Workers    []Proc `json:"workers"`     // current workers
	OldWorkers []Proc `json:"old_workers"` // still running after a reload
	Programs   []Proc `json:"programs"`
}

// Current is the worker that serves now (the newest if several are listed).
func (p Procs) Current() (Proc, bool) {
	if len(p.Workers) == 0 {
		return Proc{}, false
	}
	best := p.Workers[0]
	for _, w := range p.Workers[1:] {
		if w.Uptime < best.Uptime {
			best = w
		}
	}
	return best, true
}

// Serving is the worker that serves traffic: the current one, or when
// none is listed the newest old worker (3.1 and later list the worker
// that keeps serving after a failed reload among the old workers).
func (p Procs) Serving() (Proc, bool) {
	if w, ok := p.Current(); ok {
		return w, true
	}
	if len(p.OldWorkers) == 0 {
		return Proc{}, false
	}
	best := p.OldWorkers[0]
	for _, w := range p.OldWorkers[1:] {
		if w.Uptime < best.Uptime {
			best = w
		}
	}
	return best, true
}

// Find looks a pid up among current and old workers.
func (p Procs) Find(pid int) (Proc, bool) {
	for _, w := range append(append([]Proc(nil), p.Workers...), p.OldWorkers...) {
		if w.PID == pid {
			return w, true
		}
	}
	return Proc{}, false
}

var (
	// A build whose clocks disagree prints negative parts (2.8-dev3 before
	// upstream 2776e775eccc: "-9d-21h-59m-26s"): parsed as they are, for a
	// check to judge, not refused.
	uptimeRe = regexp.MustCompile(`^(-?\d+)d(-?\d+)h(-?\d+)m(-?\d+)s$`)
	failedRe = regexp.MustCompile(`\[failed: (\d+)\]`)
)

// ParseProcs reads `show proc`:
//
//	#<PID>          <type>          <reloads>       <uptime>        <version>
//	1               master          1 [failed: 0]   0d00h00m05s     3.4.7-1
//	# workers
//	10              worker          0               0d00h00m03s     3.4.7-1
//	# old workers
//	8               worker          1               0d00h00m05s     3.4.7-1
//	# programs
func ParseProcs(out string) (Procs, error) {
	var p Procs
	section := "master"
	seenHeader := false
	for _, line := range strings.Split(out, "\n") {
		t := strings.TrimSpace(line)
		switch {
		case t == "":
			continue
		case strings.HasPrefix(t, "#<PID>"):
			seenHeader = true
			continue
		case t == "# workers":
			section = "workers"
			continue
		case t == "# old workers":
			section = "old"
			continue
		case t == "# programs":
			section = "programs"
			continue
		case strings.HasPrefix(t, "#"):
			continue
		}
		proc, err := parseProcLine(t)
		if err != nil {
			return p, err
		}
		switch section {
		case "master":
			p.Master = proc
		case "workers":
			p.Workers = append(p.Workers, proc)
		case "old":
			p.OldWorkers = append(p.OldWorkers, proc)
		case "programs":
			p.Programs = append(p.Programs, proc)
		}
	}
	if !seenHeader || p.Master.PID == 0 {
		return p, fmt.Errorf("not a `show proc` answer: %q", firstLine(out))
	}
	return p, nil
}

func parseProcLine(t string) (Proc, error) {
	var pr Proc
	if m := failedRe.FindStringSubmatch(t); m != nil {
		pr.Failed, _ = strconv.Atoi(m[1])
		t = failedRe.ReplaceAllString(t, "")
	}
	f := strings.Fields(t)
	if len(f) < 4 {
		return pr, fmt.Errorf("show proc: short line %q", t)
	}
	var err error
	if pr.PID, err = strconv.Atoi(f[0]); err != nil {
		return pr, fmt.Errorf("show proc: bad pid in %q", t)
	}
	pr.Type = f[1]
	for i, x := range f[2:] {
		if m := uptimeRe.FindStringSubmatch(x); m != nil {
			d, _ := strconv.Atoi(m[1])
			h, _ := strconv.Atoi(m[2])
			mi, _ := strconv.Atoi(m[3])
			s, _ := strconv.Atoi(m[4])
			pr.Uptime = time.Duration(((d*24+h)*60+mi)*60+s) * time.Second
			if 2+i+1 < len(f) {
				pr.Version = f[len(f)-1]
			}
			// the reloads count is the last integer before the uptime
			for _, y := range f[2 : 2+i] {
				if n, err := strconv.Atoi(y); err == nil {
					pr.Reloads = n
				}
			}
			return pr, nil
		}
	}
	return pr, fmt.Errorf("show proc: no uptime in %q", t)
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return l
}

// Package judge holds upstream-fixes-master's cases
// (fixtures/upstream-fixes/master) and the Go judges of those whose file
// says `want go`; pure, so that `make unit` tests them alone on facts
// captured from real builds.
package judge

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/harp-project/harp/fixtures"
	"github.com/harp-project/harp/harness/core/cliout"
	"github.com/harp-project/harp/harness/core/fixcase"
	"github.com/harp-project/harp/harness/core/text"
)

// cpuLists: foreground-cpu-map-applied's answer.
var cpuLists = regexp.MustCompile(`^haproxy -db with cpu-map 1/1 0 may run on CPUs (\S+) \(the node's master on (\S+)\)$`)

// untrimmedPrefix: an error that quotes more than the '@@' it was sent.
var untrimmedPrefix = regexp.MustCompile(`prefix '@@[^']`)

// Cases in their files' order.
var Cases = fixcase.MustLoadJudged(fixtures.UpstreamFixes, "upstream-fixes/master", fixcase.GoWants{
	"foreground-cpu-map-applied": func(a string) (bool, string, error) {
		m := cpuLists.FindStringSubmatch(a)
		if m == nil {
			return false, "", fmt.Errorf("no CPU lists in %q", text.OneLine(a, 200))
		}
		cpus := m[1]
		return cpus == "0", fmt.Sprintf("a foreground process with cpu-map 1/1 0 may run on CPUs %s, not CPU 0 alone: the map was not applied", cpus), nil
	},
	"foreground-expose-fd-keeps-listener": func(a string) (bool, string, error) {
		switch {
		case strings.HasPrefix(a, "listening socket of frontend fe after shutdown frontend: kept"):
			return true, "", nil
		case strings.HasPrefix(a, "listening socket of frontend fe after shutdown frontend: closed"):
			return false, "a foreground process whose stats socket exposes its listeners closed a stopped frontend's socket, which a new process could have taken over: " + a, nil
		}
		return false, "", fmt.Errorf("no fate of the listening socket in %q", text.OneLine(a, 200))
	},
	"worker-getsocks-error-no-leak": func(a string) (bool, string, error) {
		var before, calls, after, announced int
		if _, err := fmt.Sscanf(a, "worker VmSize: %d kB before %d _getsocks over TCP, %d kB after (sockets announced: %d)", &before, &calls, &after, &announced); err != nil {
			return false, "", fmt.Errorf("no sizes in %q", text.OneLine(a, 200))
		}
		// A leaked transfer keeps about 1 MB (two buffers for 252 sockets).
		return after-before < calls*256, fmt.Sprintf("the worker grew by %d kB over %d _getsocks whose transfer failed (%d kB a call): their buffers were never freed", after-before, calls, (after-before)/calls), nil
	},
	"mcli-at-at-error-names-prefix-only": func(a string) (bool, string, error) {
		if m := untrimmedPrefix.FindString(a); m != "" {
			return false, fmt.Sprintf("the error about the @@ prefix quoted the bytes past it: %q", text.OneLine(m, 120)), nil
		}
		return true, "", nil
	},
	"worker-old-leaves-after-reload-threads": func(a string) (bool, string, error) {
		switch {
		case strings.HasPrefix(a, "old workers left "):
			return true, "", nil
		case strings.HasPrefix(a, "old worker ") && strings.Contains(a, " still listed "):
			return false, "an old worker of 4 threads never left after a reload with nothing open: " + a, nil
		}
		return false, "", fmt.Errorf("no fate of the old workers in %q", text.OneLine(a, 200))
	},
	"worker-old-leaves-after-reload": func(a string) (bool, string, error) {
		switch {
		case strings.HasPrefix(a, "old worker ") && strings.Contains(a, " left "):
			return true, "", nil
		case strings.HasPrefix(a, "old worker ") && strings.Contains(a, " still listed "):
			return false, "the old worker never left after a reload with nothing open: " + a, nil
		}
		return false, "", fmt.Errorf("no fate of the old worker in %q", text.OneLine(a, 200))
	},
	"mcli-master-uptime-sane": func(a string) (bool, string, error) {
		p, err := cliout.ParseProcs(a)
		if err != nil {
			return false, "", fmt.Errorf("show proc: %w", err) // unreadable is unknown, never a wrong uptime
		}
		return p.Master.Uptime >= 0 && p.Master.Uptime < time.Hour, fmt.Sprintf("the master's uptime is not that of a node up for less than an hour (%v)", p.Master.Uptime), nil
	},
	"master-wait-mode-nofile-default-maxconn": func(a string) (bool, string, error) {
		var m, w, hard int
		if _, err := fmt.Sscanf(a, "max open files after a reload: master %d, worker %d (hard limit %d)", &m, &w, &hard); err != nil {
			return false, "", fmt.Errorf("no limits in %q", text.OneLine(a, 200))
		}
		if w >= hard {
			// 2.7 and later leave the limit as they find it: the master's
			// then says nothing of the maxconn it runs with.
			return false, "", fmt.Errorf("the worker (maxconn 1000) runs with the node's whole limit (%d of %d): this build does not size its open-files limit from its maxconn", w, hard)
		}
		return m <= w, fmt.Sprintf("the master in wait mode may open %d files, its worker %d: it sized itself from the system's limit, not the default maxconn", m, w), nil
	},
	"master-reexec-sf-lists-no-program": func(a string) (bool, string, error) {
		var prog string
		head, sf, ok := strings.Cut(a, "; -sf after the second reload: ")
		if _, err := fmt.Sscanf(head, "program %s", &prog); err != nil || !ok {
			return false, "", fmt.Errorf("no program or -sf list in %q", text.OneLine(a, 200))
		}
		return !slices.Contains(strings.Fields(sf), prog), fmt.Sprintf("the re-executed master's -sf lists the program's pid %s (%s): a program is no old worker to stop", prog, sf), nil
	},
	"master-x-devnull-no-socket-transfer": func(a string) (bool, string, error) {
		var shared, total, old int
		if _, err := fmt.Sscanf(a, "sockets of the new worker that the old one held: %d of %d (the old one held %d)", &shared, &total, &old); err != nil {
			return false, "", fmt.Errorf("no counts in %q", text.OneLine(a, 200))
		}
		return shared == 0, fmt.Sprintf("with -x /dev/null the new worker still holds %d of the old worker's sockets (of its %d): its listeners were passed on, not bound again", shared, total), nil
	},
	"exec-daemon-master-sf-stops-old-master": func(a string) (bool, string, error) {
		switch {
		case strings.HasPrefix(a, "first master ") && strings.Contains(a, " gone "):
			return true, "", nil
		case strings.HasPrefix(a, "first master ") && strings.Contains(a, " alive "):
			return false, "a master-worker daemon started with -sf <old master> left the old master running: " + a, nil
		}
		return false, "", fmt.Errorf("no fate of the first master in %q", text.OneLine(a, 200))
	},
	"master-devnull-fd-kept-across-reloads": func(a string) (bool, string, error) {
		var before, after, reloads int
		if _, err := fmt.Sscanf(a, "/dev/null descriptors of the master: %d before, %d after %d reloads", &before, &after, &reloads); err != nil {
			return false, "", fmt.Errorf("no counts in %q", text.OneLine(a, 200))
		}
		return after <= before, fmt.Sprintf("the master held %d more descriptors on /dev/null after %d reloads (%d before, %d after): one leaked per re-execution", after-before, reloads, before, after), nil
	},
	"master-failed-reloads-no-socket-leak": func(a string) (bool, string, error) {
		var before, after, reloads, allBefore, allAfter int
		if _, err := fmt.Sscanf(a, "sockets of the master: %d before, %d after %d failed reloads (all descriptors: %d before, %d after)", &before, &after, &reloads, &allBefore, &allAfter); err != nil {
			return false, "", fmt.Errorf("no counts in %q", text.OneLine(a, 200))
		}
		return after <= before, fmt.Sprintf("the master held %d more sockets after %d reloads that failed before binding (%d before, %d after): the new worker's socketpair leaked", after-before, reloads, before, after), nil
	},
	"mcli-show-proc-lists-every-worker": func(a string) (bool, string, error) {
		var alive, rows, distinct, size int
		if _, err := fmt.Sscanf(a, "workers alive (the master's children): %d; listed by show proc: %d rows, %d distinct; show proc bytes: %d", &alive, &rows, &distinct, &size); err != nil {
			return false, "", fmt.Errorf("no counts in %q", text.OneLine(a, 200))
		}
		return distinct == alive && rows == distinct, fmt.Sprintf("show proc listed %d distinct workers of %d alive, in %d rows (%d bytes)", distinct, alive, rows, size), nil
	},
	"mcli-show-proc-newest-old-worker-first": func(a string) (bool, string, error) {
		list, ok := strings.CutPrefix(a, "old workers' reloads in show proc's order: ")
		if !ok {
			return false, "", fmt.Errorf("no order in %q", text.OneLine(a, 200))
		}
		var prev int
		for i, f := range strings.Fields(list) {
			r, err := strconv.Atoi(f)
			if err != nil {
				return false, "", fmt.Errorf("reload count %q in %q", f, a)
			}
			if i > 0 && r < prev {
				return false, "show proc listed an older worker before a newer one (reloads in its order: " + list + ")", nil
			}
			prev = r
		}
		return true, "", nil
	},
	"mcli-uptimes-sane-after-reload": func(a string) (bool, string, error) {
		var pid int
		var up string
		head, out, _ := strings.Cut(a, "\n")
		if _, err := fmt.Sscanf(head, "new worker %d; master up %s before the reload", &pid, &up); err != nil {
			return false, "", fmt.Errorf("no new worker and master uptime in %q", text.OneLine(a, 200))
		}
		before, err := time.ParseDuration(up)
		if err != nil {
			return false, "", fmt.Errorf("the master's uptime before the reload: %w", err)
		}
		p, err := cliout.ParseProcs(out)
		if err != nil {
			return false, "", fmt.Errorf("show proc: %w", err)
		}
		var bad []string
		// show proc counts whole seconds: the master is at least as old as
		// it was before the reload, less that rounding.
		if p.Master.Uptime < before-time.Second {
			bad = append(bad, fmt.Sprintf("master: %s, after %s before the reload", p.Master.Uptime, before))
		}
		for _, w := range append(append([]cliout.Proc{}, p.Workers...), p.OldWorkers...) {
			if w.Uptime < 0 || w.Uptime > p.Master.Uptime+time.Second || (w.PID == pid && w.Uptime >= 10*time.Second) {
				bad = append(bad, fmt.Sprintf("worker %d: %s", w.PID, w.Uptime))
			}
		}
		return len(bad) == 0, fmt.Sprintf("after a reload, show proc gave uptimes no process can have (master %s; %s)", p.Master.Uptime, strings.Join(bad, ", ")), nil
	},
	"worker-fds-flat-with-lingering-workers": func(a string) (bool, string, error) {
		var alone, with, alive int
		if _, err := fmt.Sscanf(a, "sockets of a new worker: %d with no old worker held, %d with %d workers alive", &alone, &with, &alive); err != nil {
			return false, "", fmt.Errorf("no counts in %q", text.OneLine(a, 200))
		}
		if alive < 3 {
			return false, "", fmt.Errorf("only %d workers alive: the old workers did not linger, so nothing was inherited to leak", alive)
		}
		return with <= alone, fmt.Sprintf("a new worker held %d more sockets with %d workers alive than with none held (%d, %d): it kept the master's descriptors for the workers before it", with-alone, alive, alone, with), nil
	},
	"exec-thread-groups-master-cli": func(a string) (bool, string, error) {
		code, err := strconv.Atoi(strings.TrimPrefix(strings.SplitN(a, "\n", 2)[0], "exit "))
		if err != nil {
			return false, "", fmt.Errorf("no exit status in %q", text.OneLine(a, 200))
		}
		return code >= 0 && code < 128, "the master-worker start ended on a signal (" + text.OneLine(a, 200) + ")", nil
	},
})

// Package masterfixes: upstream's fixed bugs of the master CLI and starting HAProxy, one case file
// each (fixtures/upstream-fixes/master), run by harness/live/fixrun. Each case is a
// named check (upstream-fixes-master/<case>), so docs/upstream-bugs.md reads
// every fix's verdict from the same run.
package masterfixes

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/harp-project/harp/harness/core/cliout"
	"github.com/harp-project/harp/harness/core/progress"
	"github.com/harp-project/harp/harness/core/suite"
	"github.com/harp-project/harp/harness/core/text"
	"github.com/harp-project/harp/harness/live/cli"
	"github.com/harp-project/harp/harness/live/fixrun"
	"github.com/harp-project/harp/harness/live/node"
	"github.com/harp-project/harp/suites/regressions/masterfixes/judge"
)

var Suite = suite.Register(fixrun.Suite(fixrun.Area{
	ID:       "upstream-fixes-master",
	Upstream: "regressions: upstream's fixed bugs of the master CLI and of starting HAProxy",
	Title:    "Master CLI commands and haproxy runs (-vv, -c, master-worker starts) from upstream's fixed bugs behave as their fixes made them, and none kills a process",
	Summary:  "one node; each case (a master CLI command, the build's haproxy run with a case's arguments and config, reloads watched in the master's /proc) expects what its upstream fix made HAProxy do; cases a build is too old for are not applicable",
	Labels:   []string{"area:regressions", "area:mworker"},
	Cases:    judge.Cases,
	Drives: map[string]fixrun.Drive{
		"master-devnull-fd-kept-across-reloads":    devnullAcrossReloads,
		"master-env-processes-intact-after-reload": processesAfterReload,
		"master-env-processes-no-null-version":     processesAfterReload,
		"worker-keeps-master-session":              workerSession,
		"master-failed-worker-load-logged":         failedWorkerLogged,
		"master-failed-reloads-no-socket-leak":     socketsAcrossFailedReloads,
		"exec-pidfile-not-left-by-failed-start":    pidfileAfterFailedStart,
		"mcli-reload-shows-worker-warnings":        reloadAnswer,
		"mcli-show-proc-lists-every-worker":        showProcManyWorkers,
		"mcli-show-proc-newest-old-worker-first":   oldWorkersOrder,
		"mcli-uptimes-sane-after-reload":           uptimeAfterLateReload,
		"worker-fds-flat-with-lingering-workers":   workerFDsWithLingering,
		"master-wait-mode-nofile-default-maxconn":  nofileAfterReload,
		"master-reexec-sf-lists-no-program":        programAfterReloads,
		"master-x-devnull-no-socket-transfer":      socketsSharedAcrossReload,
		"exec-daemon-master-sf-stops-old-master":   daemonReplaced,
		"master-sigusr2-during-parse-waits":        reloadDuringParse,
		"mcli-worker-during-parse-skipped":         workerDuringParse,
		"worker-old-leaves-after-reload":           oldWorkerLeaves,
		"worker-old-leaves-after-reload-threads":   oldWorkersLeave,
		"foreground-cpu-map-applied":               cpuMapForeground,
		"foreground-expose-fd-keeps-listener":      xferForeground,
		"worker-getsocks-error-no-leak":            getsocksLeak,
	},
}))

// oldLeaveWait: an old worker with no connection leaves within
// milliseconds; seconds more are the slack of a loaded machine.
const oldLeaveWait = 10 * time.Second

// oldWorkerLeaves reloads the node with nothing open and waits for the
// old worker to leave show proc.
func oldWorkerLeaves(ctx context.Context, n *node.Node) (string, error) {
	r, err := n.Reload(ctx, oldLeaveWait)
	if err != nil {
		return "", fmt.Errorf("the reload: %w", err)
	}
	if !r.OldExited {
		return fmt.Sprintf("old worker %d still listed by show proc %s after the signal", r.OldPID, oldLeaveWait), nil
	}
	return fmt.Sprintf("old worker %d left %s after the reload", r.OldPID, r.OldGone.Round(time.Millisecond)), nil
}

// threadReloads: soft stops enough for a race between a worker's threads
// that loses most of the time to show.
const threadReloads = 5

// oldWorkersLeave is oldWorkerLeaves threadReloads times over: the first
// old worker that stays ends it.
func oldWorkersLeave(ctx context.Context, n *node.Node) (string, error) {
	var gone []string
	for i := range threadReloads {
		r, err := n.Reload(ctx, oldLeaveWait)
		if err != nil {
			return "", fmt.Errorf("reload %d of %d: %w", i+1, threadReloads, err)
		}
		if !r.OldExited {
			earlier := ""
			if len(gone) > 0 {
				earlier = "; the earlier ones left after " + strings.Join(gone, ", ")
			}
			return fmt.Sprintf("old worker %d still listed by show proc %s after the signal (reload %d of %d%s)", r.OldPID, oldLeaveWait, i+1, threadReloads, earlier), nil
		}
		gone = append(gone, r.OldGone.Round(time.Millisecond).String())
	}
	return fmt.Sprintf("old workers left %s after the reload", strings.Join(gone, ", ")), nil
}

// reloads: enough for a leak of one per re-execution to stand out.
const reloads = 3

// devnullAcrossReloads counts the master's descriptors on /dev/null,
// reloads the node (each new worker waited for on the master CLI), and
// counts them again.
func devnullAcrossReloads(ctx context.Context, n *node.Node) (string, error) {
	before, err := devnullFDs(ctx, n)
	if err != nil {
		return "", err
	}
	for i := range reloads {
		if _, err := n.Reload(ctx, 20*time.Second); err != nil {
			return "", fmt.Errorf("reload %d of %d: %w", i+1, reloads, err)
		}
	}
	after, err := devnullFDs(ctx, n)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("/dev/null descriptors of the master: %d before, %d after %d reloads", before, after, reloads), nil
}

// processesAfterReload reloads the node once (the new worker waited for)
// and gives HAPROXY_PROCESSES as the re-executed master's environment
// holds it: its /proc/<pid>/environ, split at the NULs, so a list parsed
// in place shows cut where the parser wrote them.
func processesAfterReload(ctx context.Context, n *node.Node) (string, error) {
	if _, err := n.Reload(ctx, 20*time.Second); err != nil {
		return "", fmt.Errorf("the reload: %w", err)
	}
	dir, err := n.MasterProc(ctx)
	if err != nil {
		return "", err
	}
	env, err := os.ReadFile(filepath.Join(dir, "environ"))
	if err != nil {
		return "", fmt.Errorf("reading the master's environment (harp must run on the Docker host, as root): %w", err)
	}
	for _, kv := range strings.Split(string(env), "\x00") {
		if strings.HasPrefix(kv, "HAPROXY_PROCESSES=") {
			return kv, nil
		}
	}
	return "", fmt.Errorf("the re-executed master's environment holds no HAPROXY_PROCESSES")
}

// workerSession reads the session of the master and of its current
// worker (field 6 of /proc/<pid>/stat, read from the Docker host; the
// worker is the master's child that show proc names, found by its parent).
func workerSession(ctx context.Context, n *node.Node) (string, error) {
	dir, err := n.MasterProc(ctx)
	if err != nil {
		return "", err
	}
	mpid := strings.TrimPrefix(dir, "/proc/")
	_, _, msid, err := procStat(mpid)
	if err != nil {
		return "", err
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return "", err
	}
	var children []string
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		if ppid, comm, sid, err := procStat(e.Name()); err == nil && ppid == mpid && strings.Contains(comm, "haproxy") {
			children = append(children, fmt.Sprintf("worker %s session %s", e.Name(), sid))
			if sid == e.Name() {
				children[len(children)-1] += " (its own)"
			}
		}
	}
	if len(children) == 0 {
		return "", fmt.Errorf("the master (pid %s on this host) has no haproxy child", mpid)
	}
	return fmt.Sprintf("master %s session %s; %s", mpid, msid, strings.Join(children, "; ")), nil
}

// bigMap: entries enough that a worker parses its config for seconds.
const bigMap = 1500000

// reloadDuringParse starts a slow reload (slowReload), sends a second
// SIGUSR2 once the re-executed master waits in its loop, while the new
// worker has not logged its loading success yet,
// then reads the master's reload events until a worker loaded after both
// signals. A worker that loaded before the second signal could be sent
// tests nothing: harp's failure (too fast a parse), never an answer.
func reloadDuringParse(ctx context.Context, n *node.Node) (string, error) {
	logs0, mpid, err := slowReload(ctx, n)
	if err != nil {
		return "", err
	}
	// The fix is about a master in its loop while the worker parses. Up to
	// its own loop the re-executed master sets SIGUSR2 ignored, and the
	// kernel drops a SIGUSR2 pending then (3.4.7 lost one sent right after
	// the fork, 3 times in 3): that would test another thing.
	if err := untilStarted(ctx, mpid, "the re-executed master"); err != nil {
		return "", err
	}
	if err := n.Signal(ctx, syscall.SIGUSR2); err != nil {
		return "", fmt.Errorf("the second SIGUSR2: %w", err)
	}
	sent, err := n.LogsAfter(ctx, logs0)
	if err != nil {
		return "", err
	}
	if strings.Contains(sent, "Loading success") {
		return "", fmt.Errorf("the new worker had loaded its config before the second SIGUSR2 was sent: the parse was too fast to test")
	}
	var events []string
	err = n.WaitLogsAfter(ctx, logs0, 60*time.Second, 200*time.Millisecond, func(fresh string) bool {
		events = judge.ReloadEvents(fresh)
		return len(events) > 0 && events[len(events)-1] == "loaded" && slices.Contains(events[1:], "reload")
	})
	if err != nil {
		return "", fmt.Errorf("no worker loaded after both SIGUSR2 within 60s (master events: %s): %w", strings.Join(events, ", "), err)
	}
	return "master events: " + strings.Join(events, ", "), nil
}

// slowReload rewrites the node's config (read through the master's /proc
// root) with a backend that loads a big map, sends SIGUSR2, and returns
// once the new worker runs (a new haproxy child of the master), with the
// node's output from before the signal and the master's host pid: the
// worker parses for seconds.
func slowReload(ctx context.Context, n *node.Node) (logs0, mpid string, err error) {
	dir, err := n.MasterProc(ctx)
	if err != nil {
		return "", "", err
	}
	root := filepath.Join(dir, "root")
	cfg, err := os.ReadFile(filepath.Join(root, node.ConfigPath))
	if err != nil {
		return "", "", fmt.Errorf("reading the node's config: %w", err)
	}
	var m strings.Builder
	for i := range bigMap {
		fmt.Fprintf(&m, "key%d val%d\n", i, i)
	}
	if err := os.WriteFile(filepath.Join(root, "etc/harp/big.map"), []byte(m.String()), 0o644); err != nil {
		return "", "", fmt.Errorf("writing the big map: %w", err)
	}
	big := string(cfg) + "\nbackend harpbig\n    mode http\n    http-request set-var(txn.m) req.hdr(host),map(/etc/harp/big.map)\n"
	if err := os.WriteFile(filepath.Join(root, node.ConfigPath), []byte(big), 0o644); err != nil {
		return "", "", fmt.Errorf("rewriting the node's config: %w", err)
	}
	mpid = strings.TrimPrefix(dir, "/proc/")
	before, err := masterChildren(mpid)
	if err != nil {
		return "", "", err
	}
	if logs0, err = n.Logs(ctx); err != nil {
		return "", "", err
	}
	if err := n.Signal(ctx, syscall.SIGUSR2); err != nil {
		return "", "", fmt.Errorf("the first SIGUSR2: %w", err)
	}
	err = node.Poll(ctx, 10*time.Second, 20*time.Millisecond, func() (bool, error) {
		kids, err := masterChildren(mpid)
		if err != nil {
			return false, nil
		}
		for k := range kids {
			if !before[k] {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return "", "", fmt.Errorf("no new worker of the master's after SIGUSR2: %w", err)
	}
	return logs0, mpid, nil
}

// workerDuringParse starts a slow reload (slowReload) and, while the new
// worker has not logged its loading success yet, asks `@1 show info` on
// the master CLI; the answer is whole when HAProxy closed the connection,
// or went quiet after answering `show proc` on another one. Then, once a
// worker loaded, the master's alerts about an fd it could not transfer.
func workerDuringParse(ctx context.Context, n *node.Node) (string, error) {
	logs0, _, err := slowReload(ctx, n)
	if err != nil {
		return "", err
	}
	addr, err := n.DirectAddr(ctx, node.MasterPort) // no port proxy between: its half-close is the client's
	if err != nil {
		return "", err
	}
	control := func(ctx context.Context) error { _, err := n.Master(ctx, "show proc"); return err }
	// The re-executing master binds its CLI again: a refused connection
	// then is no answer, and is tried again while the worker parses.
	var r cli.Reply
	err = node.Poll(ctx, 5*time.Second, 50*time.Millisecond, func() (bool, error) {
		r, err = cli.Raw(ctx, addr, "@1 show info\n", cli.RawOptions{Name: "the master CLI", Wait: fixrun.AnswerWait, Control: control})
		if errors.Is(err, syscall.ECONNREFUSED) {
			return false, nil
		}
		return true, err
	})
	if err != nil {
		return "", err
	}
	asked, err := n.LogsAfter(ctx, logs0)
	if err != nil {
		return "", err
	}
	if strings.Contains(asked, "Loading success") {
		return "", fmt.Errorf("the new worker had loaded its config before the command was answered: the parse was too fast to test")
	}
	if err := n.WaitLogsAfter(ctx, logs0, 60*time.Second, 200*time.Millisecond, func(fresh string) bool { return strings.Contains(fresh, "Loading success") }); err != nil {
		return "", fmt.Errorf("the new worker never loaded: %w", err)
	}
	after, err := n.LogsAfter(ctx, logs0)
	if err != nil {
		return "", err
	}
	answered := "no"
	if strings.Contains(r.Text, "Pid:") {
		answered = "yes"
	}
	return fmt.Sprintf("answered: %s (%q); transfer alerts: %d", answered, fixrun.OneLine(r.Text), strings.Count(after, "Cannot transfer the fd")), nil
}

// procStat reads a process's parent, command and session from its stat
// (the command may hold spaces: the fields after its closing parenthesis).
func procStat(pid string) (ppid, comm, sid string, err error) {
	b, err := os.ReadFile(filepath.Join("/proc", pid, "stat"))
	if err != nil {
		return "", "", "", err
	}
	s := string(b)
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return "", "", "", fmt.Errorf("/proc/%s/stat: %q", pid, s)
	}
	f := strings.Fields(s[end+1:]) // state ppid pgrp session ...
	if len(f) < 4 {
		return "", "", "", fmt.Errorf("/proc/%s/stat: %q", pid, s)
	}
	return f[1], s[open+1 : end], f[3], nil
}

// devnullFDs counts the master's descriptors open on /dev/null (its
// /proc/<pid>/fd on the Docker host). A descriptor that closes while it
// is read is skipped; a directory harp cannot read is harp's failure.
func devnullFDs(ctx context.Context, n *node.Node) (int, error) {
	dir, err := n.MasterProc(ctx)
	if err != nil {
		return 0, err
	}
	targets, err := fdTargets(filepath.Join(dir, "fd"))
	if err != nil {
		return 0, err
	}
	count := 0
	for _, t := range targets {
		if t == "/dev/null" {
			count++
		}
	}
	return count, nil
}

// fdTargets are what a process's descriptors point to (its
// /proc/<pid>/fd, read from the Docker host). A descriptor that closes
// while it is read is skipped; a directory harp cannot read is harp's
// failure.
func fdTargets(dir string) ([]string, error) {
	fds, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("reading the descriptors in %s (harp must run on the Docker host, as root): %w", dir, err)
	}
	var out []string
	for _, fd := range fds {
		if target, err := os.Readlink(filepath.Join(dir, fd.Name())); err == nil {
			out = append(out, target)
		}
	}
	return out, nil
}

// nodeConfig is the config the node runs, read through the master's root
// directory (the container's, seen from the Docker host).
func nodeConfig(ctx context.Context, n *node.Node) (string, error) {
	dir, err := n.MasterProc(ctx)
	if err != nil {
		return "", err
	}
	b, err := os.ReadFile(filepath.Join(dir, "root", node.ConfigPath))
	if err != nil {
		return "", fmt.Errorf("reading the node's config through the master's root (harp must run on the Docker host, as root): %w", err)
	}
	return string(b), nil
}

// withGlobal is cfg with lines added at the top of its global section.
func withGlobal(cfg, lines string) (string, error) {
	i := strings.Index(cfg, "global\n")
	if i < 0 {
		return "", fmt.Errorf("the node's config has no global section")
	}
	i += len("global\n")
	return cfg[:i] + lines + cfg[i:], nil
}

// failedLoad is the master's line about a worker that failed to load.
var failedLoad = regexp.MustCompile(`Failed to load worker[^\n]*`)

// failedWorkerLogged puts in place the node's config with an unknown
// keyword in its frontend, which only the worker parses, sends SIGUSR2,
// and waits for the master's line about the failed worker.
func failedWorkerLogged(ctx context.Context, n *node.Node) (string, error) {
	cfg, err := nodeConfig(ctx, n)
	if err != nil {
		return "", err
	}
	i := strings.Index(cfg, "frontend fe\n")
	if i < 0 {
		return "", fmt.Errorf("the node's config has no frontend fe")
	}
	i += len("frontend fe\n")
	broken := cfg[:i] + "    harp-no-such-keyword\n" + cfg[i:]
	logs, err := n.Logs(ctx)
	if err != nil {
		return "", err
	}
	if err := n.WriteFile(ctx, node.ConfigPath, []byte(broken)); err != nil {
		return "", err
	}
	if err := n.Signal(ctx, syscall.SIGUSR2); err != nil {
		return "", fmt.Errorf("sending SIGUSR2: %w", err)
	}
	var line string
	err = n.WaitLogsAfter(ctx, logs, 20*time.Second, 100*time.Millisecond, func(fresh string) bool {
		line = failedLoad.FindString(fresh)
		return line != ""
	})
	if err != nil {
		return "", fmt.Errorf("the master printed no line about the failed worker within 20s: %w", err)
	}
	return line, nil
}

// failedReloads: enough failures for a leak of one per failure to stand out.
const failedReloads = 3

// socketsAcrossFailedReloads counts the master's sockets, reloads three
// times into a config that fails before binding, each failure seen, and
// counts them again (with the master's other descriptors, for the record).
func socketsAcrossFailedReloads(ctx context.Context, n *node.Node) (string, error) {
	cfg, err := nodeConfig(ctx, n)
	if err != nil {
		return "", err
	}
	// No process may raise its limit above fs.nr_open (1048576 by
	// default), root included; strict-limits makes that fatal, and it
	// happens before the new worker's listeners are bound.
	broken, err := withGlobal(cfg, "    strict-limits\n    ulimit-n 1073741824\n    maxconn 100\n")
	if err != nil {
		return "", err
	}
	socketsBefore, allBefore, err := masterFDs(ctx, n)
	if err != nil {
		return "", err
	}
	if err := n.WriteFile(ctx, node.ConfigPath, []byte(broken)); err != nil {
		return "", err
	}
	for i := range failedReloads {
		if err := failOneReload(ctx, n); err != nil {
			return "", fmt.Errorf("failed reload %d of %d: %w", i+1, failedReloads, err)
		}
	}
	socketsAfter, allAfter, err := masterFDs(ctx, n)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("sockets of the master: %d before, %d after %d failed reloads (all descriptors: %d before, %d after)",
		socketsBefore, socketsAfter, failedReloads, allBefore, allAfter), nil
}

// failOneReload sends SIGUSR2 and waits until the master is back in wait
// mode, answering show proc, with its failed count one higher, or its
// output saying the reload failed. The worker it had must still be the
// current one: a reload that succeeded is no failure.
func failOneReload(ctx context.Context, n *node.Node) error {
	before, err := n.Procs(ctx)
	if err != nil {
		return err
	}
	w, _ := before.Current()
	logs, err := n.Logs(ctx)
	if err != nil {
		return err
	}
	if err := n.Signal(ctx, syscall.SIGUSR2); err != nil {
		return fmt.Errorf("sending SIGUSR2: %w", err)
	}
	return node.Poll(ctx, 20*time.Second, 100*time.Millisecond, func() (bool, error) {
		p, err := n.Procs(ctx)
		if err != nil {
			return false, nil // re-executing
		}
		if cur, _ := p.Current(); cur.PID != w.PID {
			return false, fmt.Errorf("the reload succeeded (worker %d after %d): the config meant to fail loaded", cur.PID, w.PID)
		}
		if p.Master.Failed > before.Master.Failed {
			return true, nil
		}
		fresh, err := n.LogsAfter(ctx, logs)
		return err == nil && strings.Contains(fresh, "Cannot raise FD limit") && strings.Contains(fresh, "waitpid mode"), nil
	})
}

// masterFDs counts the master's descriptors that are sockets, and all of
// them. A descriptor that closes while it is read is skipped.
func masterFDs(ctx context.Context, n *node.Node) (sockets, all int, err error) {
	dir, err := n.MasterProc(ctx)
	if err != nil {
		return 0, 0, err
	}
	targets, err := fdTargets(filepath.Join(dir, "fd"))
	if err != nil {
		return 0, 0, err
	}
	for _, t := range targets {
		if strings.HasPrefix(t, "socket:") {
			sockets++
		}
	}
	return sockets, len(targets), nil
}

// pidfileAfterFailedStart runs the build's master-worker in the
// foreground with a pidfile and a config whose frontend only the worker
// rejects, and then looks for the pidfile (in the node's filesystem, seen
// through the master's root from the Docker host).
func pidfileAfterFailedStart(ctx context.Context, n *node.Node) (string, error) {
	const pidfile = "/tmp/harp-failed-start.pid"
	dir, err := n.MasterProc(ctx)
	if err != nil {
		return "", err
	}
	host := filepath.Join(dir, "root", pidfile)
	if err := os.Remove(host); err != nil && !os.IsNotExist(err) {
		return "", fmt.Errorf("removing an earlier pidfile: %w", err)
	}
	cfg := "global\n    nbthread 1\n\nfrontend fe\n    bind 127.0.0.1:18094\n    harp-no-such-keyword\n"
	path := "/etc/harp/exec-failed-start.cfg"
	if err := n.WriteFile(ctx, path, []byte(cfg)); err != nil {
		return "", err
	}
	rctx, cancel := context.WithTimeout(ctx, fixrun.AnswerWait)
	defer cancel()
	code, out, err := n.RunBinary(rctx, "-W", "-p", pidfile, "-f", path)
	if err != nil {
		return "", err
	}
	if code == 0 {
		return "", fmt.Errorf("haproxy -W exited 0 with a config whose frontend has an unknown keyword: %s", text.OneLine(out, 200))
	}
	state := "absent"
	if b, err := os.ReadFile(host); err == nil {
		state = fmt.Sprintf("present (%q)", strings.TrimSpace(string(b)))
	} else if !os.IsNotExist(err) {
		return "", fmt.Errorf("looking for the pidfile through the master's root: %w", err)
	}
	return fmt.Sprintf("exit %d\npidfile: %s\n%s", code, state, out), nil
}

// reloadAnswer is what the master CLI's `reload` answers.
func reloadAnswer(ctx context.Context, n *node.Node) (string, error) {
	out, err := n.Master(ctx, "reload")
	if err != nil {
		return "", fmt.Errorf("the master CLI's reload: %w", err)
	}
	if strings.TrimSpace(out) == "" {
		return "", fmt.Errorf("the master CLI's reload answered nothing: no output to judge")
	}
	return out, nil
}

// Enough lingering old workers to fill the master's 16 KB buffer (about
// 202 processes) with some to spare, and a bound on the reloads it may
// take, for connections that land on the next worker instead.
const (
	lingering  = 210
	maxReloads = 320
)

// showProcManyWorkers holds a connection open on the current worker and
// reloads, again and again, until more than lingering old workers are
// alive, then compares `show proc` with the master's children in /proc.
func showProcManyWorkers(ctx context.Context, n *node.Node) (string, error) {
	mpid, release, err := lingerWorkers(ctx, n, lingering+1, maxReloads)
	defer release()
	if err != nil {
		return "", err
	}
	children := func() (map[string]bool, error) { return masterChildren(mpid) }
	out, err := n.Master(ctx, "show proc")
	if err != nil {
		return "", fmt.Errorf("show proc: %w", err)
	}
	p, err := cliout.ParseProcs(out)
	if err != nil {
		return "", fmt.Errorf("show proc: %w", err)
	}
	kids, err := children()
	if err != nil {
		return "", err
	}
	// show proc names pids as the node's namespace sees them, /proc on
	// the Docker host its own: the two are compared by count.
	rows := append(append([]cliout.Proc{}, p.Workers...), p.OldWorkers...)
	unique := map[int]bool{}
	for _, w := range rows {
		unique[w.PID] = true
	}
	return fmt.Sprintf("workers alive (the master's children): %d; listed by show proc: %d rows, %d distinct; show proc bytes: %d",
		len(kids), len(rows), len(unique), len(out)), nil
}

// holdTries: connections dialed, one after another, for the current
// worker to hold before one reload.
const holdTries = 3

// lingerWorkers holds a connection open on the current worker (counted
// by its frontend) and reloads, again and again, until the master has at least alive haproxy
// children (in /proc: proof that the old workers lingered, whichever
// worker each connection landed on), at most reloads times. release
// closes the connections; it is never nil.
func lingerWorkers(ctx context.Context, n *node.Node, alive, reloads int) (mpid string, release func(), err error) {
	var held []*net.TCPConn
	release = func() {
		for _, c := range held {
			c.Close()
		}
	}
	hold := fixrun.Port("hold")
	addr, err := n.DirectAddr(ctx, hold)
	if err != nil {
		return "", release, err
	}
	dir, err := n.MasterProc(ctx)
	if err != nil {
		return "", release, err
	}
	mpid = strings.TrimPrefix(dir, "/proc/")
	start := time.Now()
	for i := 0; ; i++ {
		kids, err := masterChildren(mpid)
		if err != nil {
			return "", release, err
		}
		if len(kids) >= alive {
			return mpid, release, nil
		}
		if i == reloads {
			return "", release, fmt.Errorf("only %d of the master's children alive after %d reloads, each with a connection held: the old workers did not linger", len(kids), i)
		}
		if i > 0 && i%50 == 0 {
			progress.Printf("%d reloads, %d workers alive (%s)", i, len(kids), time.Since(start).Round(time.Second))
		}
		// A connection still in the listener's queue at the reload is the
		// next worker's to accept, and the current one would leave: it is
		// the current worker's once its frontend counts it. One that a
		// worker leaving took instead (a loaded machine, just after the
		// last reload) is closed, and another dialed.
		var counted error
		for try := 1; try <= holdTries; try++ {
			c, err := cli.Dial(ctx, addr, hold)
			if err != nil {
				return "", release, fmt.Errorf("holding a connection before reload %d: %w", i+1, err)
			}
			if _, counted = node.UntilErr(ctx, 5*time.Second, 20*time.Millisecond, func() (int64, error) { return n.FrontendSessions(ctx, "hold") },
				func(c int64) bool { return c >= 1 }); counted == nil {
				held = append(held, c)
				break
			}
			c.Close()
		}
		if counted != nil {
			return "", release, fmt.Errorf("none of %d connections held before reload %d was a session of the current worker's frontend hold: %w", holdTries, i+1, counted)
		}
		if err := quickReload(ctx, n); err != nil {
			return "", release, fmt.Errorf("reload %d with %d workers alive: %w", i+1, len(kids), err)
		}
	}
}

// oldWorkersOrder makes three old workers linger and gives the reload
// counts of the old workers in the order show proc lists them.
func oldWorkersOrder(ctx context.Context, n *node.Node) (string, error) {
	_, release, err := lingerWorkers(ctx, n, 4, 10)
	defer release()
	if err != nil {
		return "", err
	}
	out, err := n.Master(ctx, "show proc")
	if err != nil {
		return "", fmt.Errorf("show proc: %w", err)
	}
	p, err := cliout.ParseProcs(out)
	if err != nil {
		return "", fmt.Errorf("show proc: %w", err)
	}
	if len(p.OldWorkers) < 3 {
		return "", fmt.Errorf("show proc lists %d old workers with four workers alive: nothing to tell the order by (%s)", len(p.OldWorkers), text.OneLine(out, 300))
	}
	var reloads []string
	for _, w := range p.OldWorkers {
		reloads = append(reloads, strconv.Itoa(w.Reloads))
	}
	return "old workers' reloads in show proc's order: " + strings.Join(reloads, " "), nil
}

// quickReload sends SIGUSR2 and waits for the master to list a new
// current worker (a reload takes a tenth of a second; 10 s allows a
// loaded machine), not for the old one to leave (node.Reload would).
func quickReload(ctx context.Context, n *node.Node) error {
	old, err := n.CurrentWorker(ctx)
	if err != nil {
		return err
	}
	if err := n.Signal(ctx, syscall.SIGUSR2); err != nil {
		return fmt.Errorf("sending SIGUSR2: %w", err)
	}
	return node.Poll(ctx, 10*time.Second, 50*time.Millisecond, func() (bool, error) {
		w, err := n.CurrentWorker(ctx)
		return err == nil && w != old, nil
	})
}

// onlyWorker is the host pid of the master's one haproxy child: an error
// when it has none or several (old workers still there).
func onlyWorker(mpid string) (string, error) {
	kids, err := masterChildren(mpid)
	if err != nil {
		return "", err
	}
	if len(kids) != 1 {
		return "", fmt.Errorf("the master has %d haproxy children, not its one worker", len(kids))
	}
	for pid := range kids {
		return pid, nil
	}
	return "", nil
}

// masterChildren are the master's haproxy children, by host pid.
func masterChildren(mpid string) (map[string]bool, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	kids := map[string]bool{}
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		if ppid, comm, _, err := procStat(e.Name()); err == nil && ppid == mpid && strings.Contains(comm, "haproxy") {
			kids[e.Name()] = true
		}
	}
	return kids, nil
}

// reloadedWorker reloads (quickReload) and gives the new worker's host
// pid: the master's child that was not there before.
func reloadedWorker(ctx context.Context, n *node.Node, mpid string) (string, error) {
	before, err := masterChildren(mpid)
	if err != nil {
		return "", err
	}
	if err := quickReload(ctx, n); err != nil {
		return "", err
	}
	var fresh []string
	err = node.Poll(ctx, 5*time.Second, 50*time.Millisecond, func() (bool, error) {
		kids, err := masterChildren(mpid)
		if err != nil {
			return false, err
		}
		fresh = fresh[:0]
		for pid := range kids {
			if !before[pid] {
				fresh = append(fresh, pid)
			}
		}
		return len(fresh) == 1, nil
	})
	if err != nil {
		return "", fmt.Errorf("the new worker among the master's children (new: %v): %w", fresh, err)
	}
	if err := untilStarted(ctx, fresh[0], "the new worker"); err != nil {
		return "", err
	}
	return fresh[0], nil
}

// startWait: a worker starts (its listeners taken over, the master's
// descriptors closed) in milliseconds, and so does a re-executed master up
// to its loop; seconds more are the slack of a loaded machine.
const startWait = 10 * time.Second

// untilStarted waits until a process's main thread is seen waiting in its
// event loop (its /proc/<pid>/wchan names epoll's wait): HAProxy enters
// the loop only once its start is over. 3.1 and later list a worker in
// show proc from its fork, before it has its listeners or has closed what
// it inherited from the master: what it holds is read after that.
func untilStarted(ctx context.Context, pid, who string) error {
	path := filepath.Join("/proc", pid, "wchan")
	var last string
	err := node.Poll(ctx, startWait, 5*time.Millisecond, func() (bool, error) {
		b, err := os.ReadFile(path)
		if err != nil {
			return false, fmt.Errorf("%s (pid %s) while it starts (harp must run on the Docker host, as root): %w", who, pid, err)
		}
		last = strings.TrimSpace(string(b))
		return inEventLoop(last), nil
	})
	if errors.Is(err, node.ErrDeadline) {
		return fmt.Errorf("%s (pid %s) was never seen waiting in its event loop (%s last read %q), so its start may not be over: %w", who, pid, path, last, err)
	}
	return err
}

// inEventLoop: a kernel wait channel that is epoll's wait ("do_epoll_wait"
// on recent kernels, "ep_poll" on older ones).
func inEventLoop(wchan string) bool {
	return strings.Contains(wchan, "epoll_wait") || strings.Contains(wchan, "ep_poll")
}

// socketsOf counts a process's descriptors that are sockets.
func socketsOf(pid string) (int, error) {
	targets, err := fdTargets(filepath.Join("/proc", pid, "fd"))
	if err != nil {
		return 0, err
	}
	n := 0
	for _, t := range targets {
		if strings.HasPrefix(t, "socket:") {
			n++
		}
	}
	return n, nil
}

// workerFDsWithLingering: the sockets of a worker started with no old
// worker held, and of one started with at least two old workers alive
// (lingerWorkers makes them, proven in /proc).
func workerFDsWithLingering(ctx context.Context, n *node.Node) (string, error) {
	dir, err := n.MasterProc(ctx)
	if err != nil {
		return "", err
	}
	mpid := strings.TrimPrefix(dir, "/proc/")
	first, err := reloadedWorker(ctx, n, mpid)
	if err != nil {
		return "", fmt.Errorf("the first reload: %w", err)
	}
	alone, err := socketsOf(first)
	if err != nil {
		return "", err
	}
	// The current worker and two old ones alive, then the reload whose
	// worker is counted, with no connection dialed just before it: one
	// the old worker had not accepted yet could land on the new one and
	// count as a socket it inherited.
	_, release, err := lingerWorkers(ctx, n, 3, 8)
	defer release()
	if err != nil {
		return "", err
	}
	last, err := reloadedWorker(ctx, n, mpid)
	if err != nil {
		return "", fmt.Errorf("the reload with old workers alive: %w", err)
	}
	kids, err := masterChildren(mpid)
	if err != nil {
		return "", err
	}
	with, err := socketsOf(last)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("sockets of a new worker: %d with no old worker held, %d with %d workers alive", alone, with, len(kids)), nil
}

// lateReload: the master's age at the reload, old enough that an uptime
// started again from 0 by its re-execution stands out in whole seconds.
const lateReload = 5 * time.Second

// uptimeAfterLateReload waits until the master is lateReload old, reads
// its uptime, reloads, and gives show proc as the master CLI answers it.
func uptimeAfterLateReload(ctx context.Context, n *node.Node) (string, error) {
	p, err := n.Procs(ctx)
	if err != nil {
		return "", err
	}
	if wait := lateReload - p.Master.Uptime; wait > 0 {
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
	if p, err = n.Procs(ctx); err != nil {
		return "", err
	}
	before := p.Master.Uptime
	r, err := n.Reload(ctx, 20*time.Second)
	if err != nil {
		return "", fmt.Errorf("the reload: %w", err)
	}
	out, err := n.Master(ctx, "show proc")
	if err != nil {
		return "", fmt.Errorf("show proc: %w", err)
	}
	return fmt.Sprintf("new worker %d; master up %s before the reload\n%s", r.NewPID, before, out), nil
}

// nofileAfterReload reloads the node once (the master then runs
// re-executed, in wait mode, without the config) and reads the open-files
// soft limit of the master and of its new worker (/proc/<pid>/limits):
// HAProxy sets it from the maxconn it runs with.
func nofileAfterReload(ctx context.Context, n *node.Node) (string, error) {
	dir, err := n.MasterProc(ctx)
	if err != nil {
		return "", err
	}
	mpid := strings.TrimPrefix(dir, "/proc/")
	worker, err := reloadedWorker(ctx, n, mpid)
	if err != nil {
		return "", err
	}
	m, hard, err := nofileLimits(mpid)
	if err != nil {
		return "", err
	}
	w, _, err := nofileLimits(worker)
	if err != nil {
		return "", err
	}
	if w >= hard {
		// 2.7 and later leave the limit as they find it: the master's
		// then says nothing of the maxconn it runs with.
		return "", fixrun.NotApplicable(fmt.Sprintf("the worker (maxconn 1000) runs with the node's whole open-files limit (%d of %d): this build does not size its limit from its maxconn", w, hard))
	}
	return fmt.Sprintf("max open files after a reload: master %d, worker %d (hard limit %d)", m, w, hard), nil
}

// nofileLimits are the soft and hard limits of a process's open files.
func nofileLimits(pid string) (soft, hard int, err error) {
	b, err := os.ReadFile(filepath.Join("/proc", pid, "limits"))
	if err != nil {
		return 0, 0, fmt.Errorf("reading /proc/%s/limits (harp must run on the Docker host, as root): %w", pid, err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, "Max open files"); ok {
			if f := strings.Fields(rest); len(f) > 1 {
				s, err1 := strconv.Atoi(f[0])
				h, err2 := strconv.Atoi(f[1])
				if err1 == nil && err2 == nil {
					return s, h, nil
				}
			}
		}
	}
	return 0, 0, fmt.Errorf("/proc/%s/limits has no open-files limit: %q", pid, text.OneLine(string(b), 300))
}

// progConfig is the config of the program the node's master runs: a
// haproxy in the foreground, the only long-lived program the image has.
const progConfig = `global
    nbthread 1

defaults
    mode http
    timeout connect 2s
    timeout client 10s
    timeout server 10s

frontend prog
    bind 127.0.0.1:18095
    http-request return status 200
`

// progPath is where progConfig is written in the node.
const progPath = "/etc/harp/prog.cfg"

// programSection is the program the case adds to the node's config: a
// haproxy in the foreground on progConfig (the only long-lived program
// the image has).
const programSection = "\nprogram harp-prog\n    command /usr/sbin/haproxy -db -f " + progPath + "\n"

// programAfterReloads writes the program's config, adds the program to
// the node's config and reloads (the master starts it), finds the program
// among the master's children, reloads again, and gives the pids the
// re-executed master's command line (/proc/<pid>/cmdline) lists after
// -sf, with the program's pid: the old processes the new master is to
// stop. The node starts without the program: a program that cannot start
// ends some masters.
func programAfterReloads(ctx context.Context, n *node.Node) (string, error) {
	if err := n.WriteFile(ctx, progPath, []byte(progConfig)); err != nil {
		return "", fmt.Errorf("writing the program's config: %w", err)
	}
	cfg, err := nodeConfig(ctx, n)
	if err != nil {
		return "", err
	}
	if err := n.WriteFile(ctx, node.ConfigPath, []byte(cfg+programSection)); err != nil {
		return "", fmt.Errorf("adding the program to the node's config: %w", err)
	}
	dir, err := n.MasterProc(ctx)
	if err != nil {
		return "", err
	}
	mpid := strings.TrimPrefix(dir, "/proc/")
	if _, err := n.Reload(ctx, 20*time.Second); err != nil {
		return "", fmt.Errorf("the first reload: %w", err)
	}
	var prog string
	err = node.Poll(ctx, 10*time.Second, 50*time.Millisecond, func() (bool, error) {
		kids, err := masterChildren(mpid)
		if err != nil {
			return false, err
		}
		for pid := range kids {
			if b, err := os.ReadFile(filepath.Join("/proc", pid, "cmdline")); err == nil && strings.Contains(string(b), progPath) {
				prog = pid
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return "", fmt.Errorf("the program among the master's children after the first reload: %w", err)
	}
	// The program's own pid, as the master (in the container's pid
	// namespace) writes it in its command line.
	inner, err := nsPID(prog)
	if err != nil {
		return "", err
	}
	if _, err := n.Reload(ctx, 20*time.Second); err != nil {
		return "", fmt.Errorf("the second reload: %w", err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "cmdline"))
	if err != nil {
		return "", fmt.Errorf("reading the master's command line: %w", err)
	}
	args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
	var sf []string
	for i, a := range args {
		if a == "-sf" || a == "-st" {
			for _, p := range args[i+1:] {
				if _, err := strconv.Atoi(p); err != nil {
					break
				}
				sf = append(sf, p)
			}
		}
	}
	if len(sf) == 0 {
		return "", fmt.Errorf("the re-executed master's command line lists no old process after -sf: %q", strings.Join(args, " "))
	}
	return fmt.Sprintf("program %s; -sf after the second reload: %s", inner, strings.Join(sf, " ")), nil
}

// nsPID is a process's pid in its innermost pid namespace (the last
// NSpid field of /proc/<pid>/status, read from the Docker host).
func nsPID(pid string) (string, error) {
	b, err := os.ReadFile(filepath.Join("/proc", pid, "status"))
	if err != nil {
		return "", err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, "NSpid:"); ok {
			if f := strings.Fields(rest); len(f) > 0 {
				return f[len(f)-1], nil
			}
		}
	}
	return "", fmt.Errorf("/proc/%s/status has no NSpid", pid)
}

// socketsSharedAcrossReload reads the socket inodes of the current worker,
// reloads (quickReload, the new worker found among the master's
// children), and counts the new worker's sockets that are the old one's
// too: listeners it was passed rather than bound itself.
func socketsSharedAcrossReload(ctx context.Context, n *node.Node) (string, error) {
	dir, err := n.MasterProc(ctx)
	if err != nil {
		return "", err
	}
	mpid := strings.TrimPrefix(dir, "/proc/")
	old, err := onlyWorker(mpid)
	if err != nil {
		return "", fmt.Errorf("before the reload: %w", err)
	}
	before, err := socketInodes(old)
	if err != nil {
		return "", err
	}
	if len(before) == 0 {
		return "", fmt.Errorf("the worker %s holds no socket", old)
	}
	fresh, err := reloadedWorker(ctx, n, mpid)
	if err != nil {
		return "", err
	}
	after, err := socketInodes(fresh)
	if err != nil {
		return "", err
	}
	shared := 0
	for s := range after {
		if before[s] {
			shared++
		}
	}
	return fmt.Sprintf("sockets of the new worker that the old one held: %d of %d (the old one held %d)", shared, len(after), len(before)), nil
}

// socketInodes are a process's sockets ("socket:[inode]" targets of its
// /proc/<pid>/fd).
func socketInodes(pid string) (map[string]bool, error) {
	targets, err := fdTargets(filepath.Join("/proc", pid, "fd"))
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, t := range targets {
		if strings.HasPrefix(t, "socket:") {
			out[t] = true
		}
	}
	return out, nil
}

// daemonConfig is the config of the master-worker daemons
// daemonReplaced starts beside the node: a listener of its own, so the
// node's reach is untouched.
const daemonConfig = `global
    nbthread 1

defaults
    mode http
    timeout connect 2s
    timeout client 10s
    timeout server 10s

frontend daemon
    bind 127.0.0.1:18096
    http-request return status 200
`

// Where the daemons' config and pidfile are, in the node.
const (
	daemonPath    = "/etc/harp/daemon.cfg"
	daemonPidfile = "/tmp/harp-daemon.pid"
)

// oldMasterWait bounds the old master's exit once the new one wrote its
// pid: a fixed build stops it as soon as its new worker is ready, within
// a second.
const oldMasterWait = 10 * time.Second

// daemonReplaced starts a master-worker daemon (-W -D -p) beside the
// node, then a second one told to replace it (-sf with the first's pid,
// read from the pidfile), as an init script does, and gives whether the
// first master is gone (polled in the node's /proc, through the node's
// master's root, for oldMasterWait after the second one wrote its pid).
func daemonReplaced(ctx context.Context, n *node.Node) (string, error) {
	if err := n.WriteFile(ctx, daemonPath, []byte(daemonConfig)); err != nil {
		return "", fmt.Errorf("writing the daemon's config: %w", err)
	}
	dir, err := n.MasterProc(ctx)
	if err != nil {
		return "", err
	}
	root := filepath.Join(dir, "root")
	start := func(extra ...string) (string, error) {
		before, _ := os.ReadFile(filepath.Join(root, daemonPidfile))
		args := append([]string{"-W", "-D", "-p", daemonPidfile, "-f", daemonPath}, extra...)
		code, out, err := n.RunBinary(ctx, args...)
		if err != nil {
			return "", err
		}
		if code != 0 {
			return "", fmt.Errorf("haproxy %s exited %d: %s", strings.Join(args, " "), code, text.OneLine(out, 300))
		}
		var pid string
		err = node.Poll(ctx, 10*time.Second, 50*time.Millisecond, func() (bool, error) {
			b, err := os.ReadFile(filepath.Join(root, daemonPidfile))
			pid = strings.TrimSpace(string(b))
			_, num := strconv.Atoi(pid)
			return err == nil && num == nil && string(b) != string(before), nil
		})
		if err != nil {
			return "", fmt.Errorf("no new pid in %s after haproxy %s: %w", daemonPidfile, strings.Join(args, " "), err)
		}
		return pid, nil
	}
	first, err := start()
	if err != nil {
		return "", fmt.Errorf("the first daemon: %w", err)
	}
	if _, err := os.Stat(filepath.Join(root, "proc", first)); err != nil {
		return "", fmt.Errorf("the first daemon's master %s is not in the node's /proc: %w", first, err)
	}
	second, err := start("-sf", first)
	if err != nil {
		return "", fmt.Errorf("the second daemon: %w", err)
	}
	// The old master is told to stop once the new one's worker is up: the
	// wait for it to go counts from there, not from the pidfile (a slow
	// machine may write the pid long before the worker runs).
	var worker string
	err = node.Poll(ctx, 10*time.Second, 50*time.Millisecond, func() (bool, error) {
		worker = childIn(filepath.Join(root, "proc"), second)
		return worker != "", nil
	})
	if err != nil {
		return "", fmt.Errorf("the second daemon's master %s started no worker: %w", second, err)
	}
	t0 := time.Now()
	err = node.Poll(ctx, oldMasterWait, 50*time.Millisecond, func() (bool, error) {
		_, err := os.Stat(filepath.Join(root, "proc", first))
		return os.IsNotExist(err), nil
	})
	if err != nil {
		return fmt.Sprintf("first master %s alive %s after the second (%s) started its worker %s", first, oldMasterWait, second, worker), nil
	}
	return fmt.Sprintf("first master %s gone %s after the second (%s) started its worker %s", first, time.Since(t0).Round(100*time.Millisecond), second, worker), nil
}

// childIn is a haproxy child of pid in procDir (a pid namespace's /proc,
// seen from the Docker host), "" when there is none.
func childIn(procDir, pid string) string {
	entries, err := os.ReadDir(procDir)
	if err != nil {
		return ""
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(procDir, e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(b)
		end := strings.LastIndexByte(s, ')')
		if end < 0 || !strings.Contains(s[:end], "haproxy") {
			continue
		}
		if f := strings.Fields(s[end+1:]); len(f) > 1 && f[1] == pid {
			return e.Name()
		}
	}
	return ""
}

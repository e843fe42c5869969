// Package masterfixes: upstream's fixed bugs of the master CLI and starting HAProxy, one case file
// each (fixtures/upstream-fixes/master), run by harness/live/fixrun. Each case is a
// named check (upstream-fixes-master/<case>), so docs/upstream-bugs.md reads
// every fix's verdict from the same run.
package masterfixes

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/harp-project/harp/harness/core/suite"
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
	},
}))

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
	fds, err := os.ReadDir(filepath.Join(dir, "fd"))
	if err != nil {
		return 0, fmt.Errorf("reading the master's descriptors (harp must run on the Docker host, as root): %w", err)
	}
	count := 0
	for _, fd := range fds {
		if target, err := os.Readlink(filepath.Join(dir, "fd", fd.Name())); err == nil && target == "/dev/null" {
			count++
		}
	}
	return count, nil
}

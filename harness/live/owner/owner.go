// Package owner names this harp process in what it leaves on the machine
// (container labels, temporary files, child processes), so that the next
// harp can tell what a killed one left behind: a pid alone is not enough,
// as pids are reused and mean something only in their pid namespace.
package owner

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// ID is this process: "<pid>.<start time in clock ticks since boot>.<pid
// namespace inode>".
func ID() string { return fmt.Sprintf("%d.%s.%s", os.Getpid(), startTime(os.Getpid()), nsNumber()) }

// nsNumber is the inode of this pid namespace ("pid:[4026531836]").
func nsNumber() string { return strings.Trim(strings.TrimPrefix(NS(), "pid:"), "[]") }

// NS is this process's pid namespace.
func NS() string {
	ns, _ := os.Readlink("/proc/self/ns/pid")
	return ns
}

// startTime is field 22 of /proc/<pid>/stat ("" when unreadable).
func startTime(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	// The command name (field 2) may hold spaces: count after its ')'.
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 {
		s = s[i+1:]
	}
	f := strings.Fields(s)
	if len(f) < 20 {
		return ""
	}
	return f[19]
}

// Alive says whether the process an ID names still runs. A process that
// cannot be signalled for lack of permission (EPERM) is alive; a pid now
// held by a process started at another time is not the owner.
func Alive(id string) bool {
	parts := strings.Split(id, ".")
	pidText, start := parts[0], ""
	if len(parts) > 1 {
		start = parts[1]
	}
	if len(parts) > 2 && parts[2] != nsNumber() {
		return true // another pid namespace's process: it cannot be checked from here
	}
	pid, err := strconv.Atoi(pidText)
	if err != nil || pid <= 0 {
		return false
	}
	if pid == os.Getpid() {
		return true
	}
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	if now := startTime(pid); start != "" && now != "" && now != start {
		return false // the pid was reused
	}
	return true
}

// TempPrefix marks a temporary file or directory as this process's:
// prefix + ID + "-" (os.MkdirTemp adds its random part).
func TempPrefix(prefix string) string { return prefix + ID() + "-" }

// SweepTemp removes, in each directory, the entries named by TempPrefix
// with one of the prefixes whose owner is gone; it returns what it removed.
func SweepTemp(prefixes []string, dirs ...string) []string {
	var removed []string
	for _, dir := range dirs {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			for _, p := range prefixes {
				rest, ok := strings.CutPrefix(e.Name(), p)
				if !ok {
					continue
				}
				id, _, ok := strings.Cut(rest, "-")
				if ok && strings.Contains(id, ".") && !Alive(id) {
					path := filepath.Join(dir, e.Name())
					if os.RemoveAll(path) == nil {
						removed = append(removed, path)
					}
				}
			}
		}
	}
	return removed
}

// Package child runs the commands harp depends on (make, patch, tar,
// mmdebstrap, apt, haproxy -vv, git) with a deadline, in a process group
// of their own that is killed whole when the deadline passes or harp is
// interrupted, and marked with harp's owner id so that the next harp can
// kill what a killed one left running.
package child

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/harp-project/harp/harness/live/owner"
)

// Env is the variable that marks harp's child processes with their owner.
const Env = "HARP_OWNER"

// Command is exec.CommandContext with a deadline (the context's, or
// timeout if sooner), its own process group, the whole group killed on
// cancel, and the owner mark. Call the returned cancel when done.
func Command(ctx context.Context, timeout time.Duration, name string, args ...string) (*exec.Cmd, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second // a grandchild holding the pipes cannot hang Wait
	cmd.Env = append(os.Environ(), Env+"="+owner.ID())
	return cmd, cancel
}

// Output runs a command and returns its combined output; a deadline that
// passed is named in the error.
func Output(ctx context.Context, timeout time.Duration, name string, args ...string) ([]byte, error) {
	cmd, cancel := Command(ctx, timeout, name, args...)
	defer cancel()
	var b bytes.Buffer
	cmd.Stdout, cmd.Stderr = &b, &b
	err := cmd.Run()
	if err != nil && cmd.ProcessState != nil && ctxExpired(cmd) {
		err = fmt.Errorf("%s did not finish within %s and was killed", name, timeout)
	}
	return b.Bytes(), err
}

func ctxExpired(cmd *exec.Cmd) bool {
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}

// SweepOrphans kills the process groups of children whose harp is gone
// (a harp killed with SIGKILL leaves its compiler running); it returns the
// pids it killed.
func SweepOrphans() []int {
	var killed []int
	procs, _ := filepath.Glob("/proc/[0-9]*/environ")
	for _, p := range procs {
		env, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		for _, kv := range bytes.Split(env, []byte{0}) {
			id, ok := strings.CutPrefix(string(kv), Env+"=")
			if !ok || owner.Alive(id) {
				continue
			}
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
			if pgid, err := syscall.Getpgid(pid); err == nil && pgid == pid {
				syscall.Kill(-pgid, syscall.SIGKILL)
			} else {
				syscall.Kill(pid, syscall.SIGKILL)
			}
			killed = append(killed, pid)
		}
	}
	return killed
}

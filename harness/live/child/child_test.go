package child

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/harp-project/harp/harness/live/owner"
)

func TestDeadlineKillsTheGroup(t *testing.T) {
	t0 := time.Now()
	// sh starts a grandchild that would outlive a kill of sh alone.
	out, err := Output(context.Background(), 300*time.Millisecond, "sh", "-c", "sleep 30 & sleep 30")
	if err == nil || !strings.Contains(err.Error(), "did not finish within 300ms") || time.Since(t0) > 10*time.Second {
		t.Errorf("%q %v after %s", out, err, time.Since(t0))
	}
}

func TestOwnerMark(t *testing.T) {
	if got := mustOwner(t); strings.TrimSpace(got) != owner.ID() {
		t.Errorf("owner mark %q, want %q", got, owner.ID())
	}
}

// marked waits until a started process shows its environment (it has
// exec'd), with a deadline.
func marked(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ"); err == nil && strings.Contains(string(env), Env+"=") {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("process %d never showed its mark", pid)
}

// A process marked with an owner that is gone is killed, with its group.
func TestSweepOrphans(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Env = append(os.Environ(), Env+"=999999999.7")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	marked(t, cmd.Process.Pid)
	killed := SweepOrphans()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("the orphan still runs (killed %v)", killed)
	}
	mine := exec.Command("sleep", "30")
	mine.Env = append(os.Environ(), Env+"="+strings.TrimSpace(mustOwner(t)))
	mine.Start()
	defer mine.Process.Kill()
	marked(t, mine.Process.Pid)
	for _, pid := range SweepOrphans() {
		if pid == mine.Process.Pid {
			t.Error("a child of a live harp was killed")
		}
	}
}

func mustOwner(t *testing.T) string {
	out, err := Output(context.Background(), 5*time.Second, "sh", "-c", "echo $"+Env)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

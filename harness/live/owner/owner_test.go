package owner

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

func TestAlive(t *testing.T) {
	if !Alive(ID()) {
		t.Error("this process is not alive")
	}
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip(err)
	}
	dead := strconv.Itoa(cmd.Process.Pid) + ".1"
	if Alive(dead) {
		t.Errorf("a finished process %s is alive", dead)
	}
	// pid 1 runs, but not since the start time named: a reused pid.
	if Alive("1.999999999999") {
		t.Error("a reused pid counts as its old owner")
	}
	if Alive("garbage") {
		t.Error("garbage is alive")
	}
	// A process of another pid namespace cannot be checked: never swept.
	if !Alive(dead + ".1") {
		t.Error("an owner in another pid namespace counts as gone")
	}
}

func TestSweepTemp(t *testing.T) {
	dir := t.TempDir()
	mine, _ := os.MkdirTemp(dir, TempPrefix("harp-local-"))
	dead := filepath.Join(dir, "harp-local-999999999.5-123")
	os.Mkdir(dead, 0o755)
	other := filepath.Join(dir, "harp-local-unrelated")
	os.Mkdir(other, 0o755)
	removed := SweepTemp([]string{"harp-local-"}, dir)
	if len(removed) != 1 || removed[0] != dead {
		t.Errorf("removed %v", removed)
	}
	for _, keep := range []string{mine, other} {
		if _, err := os.Stat(keep); err != nil {
			t.Errorf("%s was removed", keep)
		}
	}
}

package node

import "testing"

func TestNSPid(t *testing.T) {
	status := "Name:\thaproxy\nTgid:\t41235\nNgid:\t0\nPid:\t41235\nPPid:\t41200\nNSpid:\t41235\t8\nNSpgid:\t41200\t1\n"
	if got := nsPID(status); got != 8 {
		t.Errorf("nsPID = %d, want the container's 8", got)
	}
	if got := nsPID("Name:\tx\n"); got != 0 {
		t.Errorf("no NSpid line: %d", got)
	}
}

func TestSilentOnSuccess(t *testing.T) {
	for cmd, want := range map[string]bool{"set table t key k data.gpc0 1": true, "@!12 clear table t": true, "show peers": false, "@!12 show table t": false} {
		if silentOnSuccess(cmd) != want {
			t.Errorf("silentOnSuccess(%q) = %v", cmd, !want)
		}
	}
}

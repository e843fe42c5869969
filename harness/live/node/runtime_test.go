package node

import (
	"strconv"
	"strings"
	"testing"
)

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
	for cmd, want := range map[string]bool{"reload": true, "set table t key k data.gpc0 1": false, "@!12 clear table t": false, "enable frontend web": false, "show peers": false, "@!12 show table t": false} {
		if silentOnSuccess(cmd) != want {
			t.Errorf("silentOnSuccess(%q) = %v", cmd, !want)
		}
	}
}

// A local run moves every port of its config, the same port to the same
// new one, so two runs never reach each other's processes.
func TestLocalPorts(t *testing.T) {
	cfg := "global\n    stats socket ipv4@127.0.0.1:40001 level admin\npeers first\n    peer harp 127.0.0.1:10001\npeers second\n    peer harp 127.0.0.1:10002\n" +
		"peers sync\n    peer local 0.0.0.0:10000\n    peer remote 127.0.0.1:10999\nfrontend fe\n    bind :8080 thread 1\n    bind :8080 thread 2\nbackend b\n    server backend backend:8080\n"
	next := 50000
	free := func() (string, error) { next++; return strconv.Itoa(next), nil }
	out, moved, err := localPorts(cfg, free)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"10001", "10002", "10000", "10999", "8080", "40001"} {
		if moved[p] == "" || strings.Contains(out, "0.0.1:"+p) || strings.Contains(out, "bind :"+p) {
			t.Errorf("port %s not moved: %v\n%s", p, moved, out)
		}
	}
	if strings.Count(out, "bind :"+moved["8080"]) != 2 || !strings.Contains(out, "server backend backend:8080") || !strings.Contains(out, "ipv4@127.0.0.1:"+moved["40001"]) {
		t.Errorf("rewritten config:\n%s", out)
	}
}

func TestOnlyReadsAreAskedAgain(t *testing.T) {
	for cmd, want := range map[string]bool{
		"show peers": true, "@!12 show table t": true, "show proc": true,
		"set table t key k data.gpc0 1": false, "@!12 set maxconn global 1": false,
		"reload": false, "show info; set maxconn global 1": false, "shutdown session 0x1": false,
	} {
		if readOnly(cmd) != want {
			t.Errorf("%q: %v", cmd, !want)
		}
	}
}

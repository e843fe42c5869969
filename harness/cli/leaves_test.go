package cli_test

import (
	"context"
	"net"
	"os/exec"
	"strings"
	"testing"

	"github.com/harp-project/harp/harness/cli"
)

// Value packages are leaves: verdicts, reports, parsers and the doctor
// must compile without Docker or testcontainers.
func TestValuePackagesStayLeaves(t *testing.T) {
	leaves := []string{"cli", "cliout", "verdict", "report", "doctor", "spec", "text"}
	for _, p := range leaves {
		out, err := exec.Command("go", "list", "-deps", "github.com/harp-project/harp/harness/"+p).CombinedOutput()
		if err != nil {
			t.Fatalf("go list %s: %v\n%s", p, err, out)
		}
		for _, dep := range strings.Fields(string(out)) {
			if strings.Contains(dep, "testcontainers") || strings.Contains(dep, "moby/moby") || strings.HasSuffix(dep, "harness/node") {
				t.Errorf("harness/%s depends on %s", p, dep)
			}
		}
	}
}

// An endless answer is cut at MaxAnswer, not read into memory whole.
func TestAnswerIsBounded(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		chunk := make([]byte, 1<<20)
		for range 200 { // 200 MiB, if anyone read it all
			if _, err := c.Write(chunk); err != nil {
				return
			}
		}
	}()
	old := cli.MaxAnswer
	cli.MaxAnswer = 4 << 20
	defer func() { cli.MaxAnswer = old }()
	_, err = cli.Ask(context.Background(), "tcp", ln.Addr().String(), "show table big")
	if err == nil || !strings.Contains(err.Error(), "larger than 4 MiB") {
		t.Errorf("an endless answer: %v", err)
	}
}

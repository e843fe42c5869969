package cli_test

import (
	"context"
	"net"
	"strings"
	"testing"

	"github.com/harp-project/harp/harness/live/cli"
)

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

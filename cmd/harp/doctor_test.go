package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harp-project/harp/harness/live/cli"
)

// bigTableSocket serves a captured 2.6.12 node on a UNIX socket, its table
// cluster/tbl holding n entries; line is appended to the dump.
func bigTableSocket(t *testing.T, node string, n int, line string) string {
	t.Helper()
	dir := filepath.Join("..", "..", "fixtures", "captures", "2.6.12-1+deb12u4", "cluster", "healthy", node)
	head := fmt.Sprintf("# table: cluster/tbl, type: string, size:%d, used:%d\n", 2*n, n)
	var dump strings.Builder
	dump.WriteString(head)
	for i := range n {
		fmt.Fprintf(&dump, "0x%x: key=192.0.2.%d-%d use=0 exp=3599000 shard=0 gpc0=1 http_req_cnt=0\n", 0x7f0000+i, i%256, i)
	}
	dump.WriteString(line)
	path := filepath.Join(t.TempDir(), node+".sock")
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				cmd, _ := bufio.NewReader(c).ReadString('\n')
				switch cmd = strings.TrimSpace(cmd); cmd {
				case "show table":
					c.Write([]byte(head + "\n"))
				case "show table cluster/tbl":
					c.Write([]byte(dump.String()))
				default:
					b, _ := os.ReadFile(filepath.Join(dir, strings.ReplaceAll(cmd, " ", "_")+".txt"))
					c.Write(b)
				}
			}()
		}
	}()
	return path
}

// One-shot harp doctor on a table whose dump is over the cap on one answer
// said "probably not at admin level", exit 1, where --watch said healthy:
// it reads the table as --watch does now, exit 0. A table harp cannot read
// at all is exit 3 (the diagnosis is partial), not a level problem.
func TestDoctorOnATableOverTheAnswerCap(t *testing.T) {
	defer func(m int64) { cli.MaxAnswer = m }(cli.MaxAnswer)
	cli.MaxAnswer = 64 << 10
	s1, s2 := bigTableSocket(t, "node1", 6000, ""), bigTableSocket(t, "node2", 6000, "")
	if code := cmdDoctor(context.Background(), []string{"--settle", "0", "--socket", s1, "--socket", s2}); code != 0 {
		t.Errorf("a table over the answer cap: exit %d, want 0 (healthy)", code)
	}
	long := "0x1: key=" + strings.Repeat("x", 70<<10) + " use=0 exp=1 gpc0=1\n"
	s3 := bigTableSocket(t, "node1", 10, long)
	if code := cmdDoctor(context.Background(), []string{"--settle", "0", "--socket", s3}); code != 3 {
		t.Errorf("a table harp cannot read: exit %d, want 3", code)
	}
}

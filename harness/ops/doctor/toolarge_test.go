package doctor

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/harp-project/harp/harness/live/cli"
)

// serveBigTable serves a captured 2.6.12 node whose table cluster/tbl
// holds n entries: show table and its dump are made up, the rest is the
// capture's.
func serveBigTable(t *testing.T, node string, n int) string {
	t.Helper()
	dir := filepath.Join("..", "..", "..", "fixtures", "captures", "2.6.12-1+deb12u4", "cluster", "healthy", node)
	head := fmt.Sprintf("# table: cluster/tbl, type: string, size:%d, used:%d\n", 2*n, n)
	var dump strings.Builder
	dump.WriteString(head)
	for i := range n {
		fmt.Fprintf(&dump, "0x%x: key=192.0.2.%d-%d use=0 exp=3599000 shard=0 gpc0=1 http_req_cnt=0\n", 0x7f0000+i, i%256, i)
	}
	big := dump.String()
	return serve(t, func(c net.Conn) {
		cmd, _ := bufio.NewReader(c).ReadString('\n')
		switch cmd = strings.TrimSpace(cmd); cmd {
		case "show table":
			c.Write([]byte(head + "\n"))
		case "show table cluster/tbl":
			c.Write([]byte(big))
		default:
			b, err := os.ReadFile(filepath.Join(dir, strings.ReplaceAll(cmd, " ", "_")+".txt"))
			if err != nil {
				b = []byte("Unknown command.\n")
			}
			c.Write(b)
		}
	})
}

// A table whose dump is over the cap on one answer (64 MiB: 1.2M entries
// on 2.6.12) was a socket-level problem, "probably not at admin level",
// to the one-shot doctor, and healthy to --watch, which streams dumps.
// Both read it the same way now and agree: compared, healthy.
func TestTableOverTheAnswerCapIsRead(t *testing.T) {
	defer func(m int64) { cli.MaxAnswer = m }(cli.MaxAnswer)
	cli.MaxAnswer = 64 << 10 // the dump below is about 7 times that
	const n = 6000
	names := []string{"node1", "node2"}
	sockets := []string{serveBigTable(t, "node1", n), serveBigTable(t, "node2", n)}
	ctx := context.Background()
	once := Diagnose(Reader(10*time.Second, names, sockets, NewBudget(RunBudget))(ctx))
	watch := Diagnose(DigestReader(10*time.Second, names, sockets, RunBudget)(ctx))
	for what, d := range map[string]Diagnosis{"one-shot": once, "watch": watch} {
		if !d.Healthy || d.Has(SocketLevel) || len(d.Tables) != 1 || d.Tables[0].Keys != n {
			t.Errorf("%s: healthy %v, findings %+v, tables %+v; want a healthy diagnosis with %d keys compared", what, d.Healthy, d.Findings, d.Tables, n)
		}
	}
	if !slices.Equal(once.Codes(), watch.Codes()) || once.Cause != watch.Cause {
		t.Errorf("one-shot and watch disagree: %v %q, %v %q", once.Codes(), once.Cause, watch.Codes(), watch.Cause)
	}
}

// A table too large for harp to read at all (its digest would pass the
// run's memory budget) is said to be that, naming the table and its
// size, its entries unknown: never a socket-level problem, the same in
// the one-shot doctor and --watch, and never healthy.
func TestTableTooLargeToReadIsNamedAsSuch(t *testing.T) {
	const n = 6000 // a digest of 16 bytes an entry: 96 KB, over the budget
	sockets := []string{serveBigTable(t, "node1", n)}
	ctx := context.Background()
	once := Diagnose(Reader(10*time.Second, []string{"node1"}, sockets, NewBudget(64<<10))(ctx))
	watch := Diagnose(DigestReader(10*time.Second, []string{"node1"}, sockets, 64<<10)(ctx))
	for what, d := range map[string]Diagnosis{"one-shot": once, "watch": watch} {
		f, ok := d.Find(TooLarge, "node1", "cluster/tbl")
		if !ok || d.Healthy || d.Has(SocketLevel) || d.Has(Unreachable) {
			t.Errorf("%s: healthy %v, findings %+v; want %s about node1's cluster/tbl alone", what, d.Healthy, d.Findings, TooLarge)
			continue
		}
		for _, want := range []string{"cluster/tbl", "6000 entries", "memory budget", "unknown"} {
			if !strings.Contains(f.Message, want) {
				t.Errorf("%s: %q does not say %q", what, f.Message, want)
			}
		}
		if strings.Contains(f.Message, "admin level") || strings.Contains(d.Text(), "refused by the socket") {
			t.Errorf("%s: a table too large reads as a socket-level problem:\n%s", what, d.Text())
		}
	}
	if !slices.Equal(once.Codes(), watch.Codes()) || once.Cause != watch.Cause {
		t.Errorf("one-shot and watch disagree: %v %q, %v %q", once.Codes(), once.Cause, watch.Codes(), watch.Cause)
	}
}

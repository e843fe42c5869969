package doctor

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/harp-project/harp/harness/core/cliout"
)

// dumpCapture streams a captured answer line by line, as DialDump does.
func dumpCapture(dir string) Dump {
	q := fromCapture(dir)
	return func(ctx context.Context, cmd string, line func([]byte) error) error {
		out, err := q(ctx, cmd)
		if err != nil {
			return err
		}
		return eachLine(strings.NewReader(out), line)
	}
}

// Tables read into digests compare as tables read whole: every capture of
// every build gives the same tables and findings both ways.
func TestDigestsCompareAsEntries(t *testing.T) {
	sits, _ := filepath.Glob(filepath.Join("..", "..", "..", "fixtures", "captures", "*", "cluster", "*"))
	if len(sits) < 16 {
		t.Fatalf("%d captured situations", len(sits))
	}
	for _, sit := range sits {
		var whole, digested []Instance
		for _, n := range []string{"node1", "node2", "node3"} {
			dir := filepath.Join(sit, n)
			a, err := Collect(context.Background(), n, n, fromCapture(dir))
			if err != nil {
				t.Fatal(err)
			}
			b, err := CollectDigests(context.Background(), n, n, fromCapture(dir), dumpCapture(dir), NewBudget(RunBudget))
			if err != nil {
				t.Fatal(err)
			}
			for _, tb := range b.Tables {
				if tb.Entries != nil {
					t.Errorf("%s/%s: %s kept its entries", sit, n, tb.Name)
				}
			}
			whole, digested = append(whole, a), append(digested, b)
		}
		dw, dd := Diagnose(whole), Diagnose(digested)
		if !reflect.DeepEqual(dw.Tables, dd.Tables) {
			t.Errorf("%s: tables\nwhole:    %+v\ndigested: %+v", sit, dw.Tables, dd.Tables)
		}
		if !reflect.DeepEqual(dw.Findings, dd.Findings) {
			t.Errorf("%s: findings\nwhole:    %+v\ndigested: %+v", sit, dw.Findings, dd.Findings)
		}
	}
}

// One entry line reads the same whatever the order of its data fields,
// and as cliout reads it.
func TestScanEntry(t *testing.T) {
	a := "0x7f: key=k1 use=0 exp=3599 shard=0 gpc0=1 http_req_rate(10000)=3 conn_cnt=2"
	b := "0x8e: key=k1 use=2 exp=12 conn_cnt=2 http_req_rate(10000)=3 gpc0=1"
	ka, fa, ok := scanEntry([]byte(a), nil)
	ha := dataHash(fa)
	kb, fb, okb := scanEntry([]byte(b), nil)
	if !ok || !okb || string(ka) != "k1" || string(kb) != "k1" || ha != dataHash(fb) {
		t.Fatalf("%s %s %v %v", ka, kb, ha, dataHash(fb))
	}
	ts, err := cliout.ParseTables("# table: s/t, type: string, size:10, used:1\n" + a)
	if err != nil {
		t.Fatal(err)
	}
	if want := fnvAdd(fnvOffset, []byte(dataOf(ts[0].Entries[0]))); ha != want {
		t.Errorf("streamed data hash %x, from the entry %x (%q)", ha, want, dataOf(ts[0].Entries[0]))
	}
	if _, f, _ := scanEntry([]byte("0x1: key=k1 use=0 exp=1 gpc0=2 http_req_rate(10000)=3 conn_cnt=2"), nil); dataHash(f) == ha {
		t.Error("other data, same hash")
	}
}

// table answers one dump for t.
func table(t *testing.T, answer string, err error) (Instance, cliout.Table) {
	t.Helper()
	in := Instance{Errors: map[string]string{}}
	dump := func(_ context.Context, _ string, line func([]byte) error) error {
		if e := eachLine(strings.NewReader(answer), line); e != nil {
			return e
		}
		return err
	}
	tb := in.digestTable(context.Background(), dump, NewBudget(1<<20), nil, cliout.Table{Name: "s/t"})
	return in, tb
}

// What a socket says instead of a table is an error for that table, in
// the words ask would give; a table larger than its header grows; a
// budget too small refuses it.
func TestDigestTable(t *testing.T) {
	in, _ := table(t, "Permission denied\n", nil)
	if in.Errors["show table s/t"] != "Permission denied" || in.Digests != nil {
		t.Errorf("denied: %+v", in)
	}
	in, _ = table(t, "", nil)
	if in.Errors["show table s/t"] != "empty answer" {
		t.Errorf("empty: %+v", in.Errors)
	}
	in, _ = table(t, "Unknown table\n", nil)
	if in.Errors["show table s/t"] != "show table: Unknown table" {
		t.Errorf("garbage: %+v", in.Errors)
	}
	var b bytes.Buffer
	b.WriteString("# table: s/t, type: string, size:1000, used:2\n")
	for i := range 100 {
		fmt.Fprintf(&b, "0x%x: key=k%d use=0 exp=10 shard=0 gpc0=%d\n", i, i%90, i)
	}
	in, tb := table(t, b.String(), nil)
	if len(in.Errors) > 0 || in.Digests["s/t"].Len() != 100 || tb.Used != 2 || tb.Size != 1000 || in.Digests["s/t"].Stores != "gpc0" {
		t.Fatalf("%+v %+v", in.Errors, tb)
	}
	v := TableView{Missing: map[string]int{}}
	v.count([]copyOf{{"a", in.Digests["s/t"].entries}})
	if v.Keys != 90 {
		t.Errorf("keys listed twice count once: %d keys, want 90", v.Keys)
	}
	in, _ = table(t, b.String(), errors.New("i/o timeout"))
	if in.Errors["show table s/t"] != "i/o timeout" || in.Digests != nil {
		t.Errorf("a dump cut short is not compared: %+v", in.Errors)
	}
	in, _ = table(t, "# table: s/t, type: string, size:100000000, used:100000000\n", nil)
	if !strings.Contains(in.Errors["show table s/t"], "memory budget") {
		t.Errorf("over the budget: %+v", in.Errors)
	}
	in, _ = table(t, "# table: s/t, type: string, size:1, used:1\n0x1: key="+strings.Repeat("x", maxLine+1)+"\n", nil)
	if !strings.Contains(in.Errors["show table s/t"], "line longer than") {
		t.Errorf("a long line: %+v", in.Errors)
	}
}

// The merge counts what a map of every key would: keys on some instances
// only, per instance missing, and common keys whose data differ.
func TestCountMerge(t *testing.T) {
	mk := func(kv map[string]string) []entryDigest {
		var es []cliout.Entry
		for k, v := range kv {
			es = append(es, cliout.Entry{Key: k, Data: map[string]string{"gpc0": v}})
		}
		return digestEntries(es).entries
	}
	v := TableView{Missing: map[string]int{}}
	v.count([]copyOf{
		{"a", mk(map[string]string{"1": "x", "2": "x", "3": "x", "4": "x"})},
		{"b", mk(map[string]string{"1": "x", "2": "y", "3": "x"})},
		{"c", mk(map[string]string{"1": "x", "2": "x", "5": "x"})},
	})
	want := TableView{Keys: 5, Diverging: 3, ValueDiffs: 1, Percent: 60, Missing: map[string]int{"b": 2, "c": 2, "a": 1}}
	if !reflect.DeepEqual(v, want) {
		t.Errorf("%+v, want %+v", v, want)
	}
}

// DigestReader reads real sockets: a captured node served on a UNIX socket.
func TestDigestReaderOnASocket(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "fixtures", "captures", "3.4.7-1", "cluster", "healthy", "node1")
	s := serveCapture(t, dir)
	ins := DigestReader(5*time.Second, []string{"n1"}, []string{s}, RunBudget)(context.Background())
	if ins[0].Unreachable != "" || len(ins[0].Errors) > 0 || ins[0].Digests["cluster/tbl"].Len() != 10 {
		t.Fatalf("%+v", ins[0])
	}
}

// serveCapture serves a captured node's answers on a UNIX socket.
func serveCapture(t *testing.T, dir string) string {
	t.Helper()
	return serve(t, func(c net.Conn) {
		cmd, _ := bufio.NewReader(c).ReadString('\n')
		b, err := os.ReadFile(filepath.Join(dir, strings.NewReplacer(" ", "_", "/", "_").Replace(strings.TrimSpace(cmd))+".txt"))
		if err != nil {
			b = []byte("Unknown command.\n")
		}
		c.Write(b)
	})
}

// Reading a dump into a digest makes no garbage per line: a monitor of
// large tables holds their digests, not what reading them left behind.
func TestScanEntryAllocatesNothing(t *testing.T) {
	line := []byte("0x7f45b87acdc8: key=192.0.2.1 use=0 exp=3593937 shard=0 http_req_rate(10000)=3 gpc0=1 conn_cnt=2")
	fields := make([][2][]byte, 0, 8)
	var h uint64
	if n := testing.AllocsPerRun(100, func() {
		key, fs, _ := scanEntry(line, fields)
		h ^= fnvAdd(fnvOffset, key) ^ dataHash(fs)
	}); n != 0 {
		t.Errorf("%v allocations a line", n)
	}
}

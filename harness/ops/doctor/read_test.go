package doctor

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// A --socket that is a regular file or a directory is named as such, not
// "connection refused".
func TestSocketPathThatIsNotASocket(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "admin.sock")
	os.WriteFile(file, []byte("x"), 0o644)
	for path, want := range map[string]string{file: "a regular file, not a socket", dir: "a directory, not a socket"} {
		if err := CheckSocket(path); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckSocket(%s) = %v, want %q", path, err, want)
		}
		_, err := Collect(context.Background(), path, path, Dial(path))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Collect(%s) = %v, want %q", path, err, want)
		}
	}
	for _, ok := range []string{"127.0.0.1:9999", filepath.Join(dir, "not-yet.sock")} {
		if err := CheckSocket(ok); err != nil {
			t.Errorf("CheckSocket(%s) = %v", ok, err)
		}
	}
}

// serve answers every connection on a new UNIX socket with answer(conn).
func serve(t *testing.T, answer func(net.Conn)) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.sock")
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
			go func() { defer c.Close(); answer(c) }()
		}
	}()
	return path
}

// 8 sockets that stream bytes without end took about 225 MB each (an
// answer is capped at 64 MiB, but a doubling buffer and string copies
// multiplied it): what one run's answers hold is bounded for the whole
// run, all sockets together.
func TestStreamingSocketsShareOneBudget(t *testing.T) {
	junk := make([]byte, 64<<10)
	for i := range junk {
		junk[i] = 'x'
	}
	var names, sockets []string
	for range 8 {
		s := serve(t, func(c net.Conn) {
			for {
				if _, err := c.Write(junk); err != nil {
					return
				}
			}
		})
		names, sockets = append(names, s), append(sockets, s)
	}
	const budget = 48 << 20
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	t0 := time.Now()
	ins := Reader(20*time.Second, names, sockets, NewBudget(budget))(context.Background())
	runtime.ReadMemStats(&after)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 2*budget+(16<<20) {
		t.Errorf("8 streaming sockets made the doctor allocate %d MiB, over twice its budget of %d MiB", alloc>>20, budget>>20)
	}
	if time.Since(t0) > 15*time.Second {
		t.Errorf("streaming sockets held the doctor %s", time.Since(t0))
	}
	for _, in := range ins {
		if !strings.Contains(in.Unreachable, "memory budget") && !strings.Contains(in.Unreachable, "larger than") {
			t.Errorf("%s: %q, want the budget refusal", in.Name, in.Unreachable)
		}
	}
}

// Settle keeps the first read and the latest: a read's answers are given
// back to the budget once the read after it is done, never the first's,
// so settling for long does not run the budget down.
func TestReaderGivesBackSupersededReads(t *testing.T) {
	info := "Name: HAProxy\nVersion: 3.4.7-1\nPid: 7\nnode: n1\n"
	s := serve(t, func(c net.Conn) {
		buf := make([]byte, 256)
		n, _ := c.Read(buf)
		if strings.HasPrefix(string(buf[:n]), "show info") {
			c.Write([]byte(info))
		}
	})
	b := NewBudget(1 << 20)
	read := Reader(5*time.Second, []string{"n1"}, []string{s}, b)
	var held []int64
	for range 5 {
		if ins := read(context.Background()); ins[0].Unreachable != "" {
			t.Fatal(ins[0].Unreachable)
		}
		held = append(held, b.Held())
	}
	one := held[0]
	if one < int64(len(info)) || held[1] != 2*one || held[4] != 2*one {
		t.Errorf("bytes held after each read: %v, want %d then %d on", held, one, 2*one)
	}
}

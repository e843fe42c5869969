package masterfixes

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/harp-project/harp/harness/live/fixrun"
	"github.com/harp-project/harp/harness/live/node"
)

// getsocksCalls: enough for a megabyte lost per call to stand out of a
// worker's usual growth by far.
const getsocksCalls = 20

// sendBatch is HAProxy's MAX_SEND_FD: _getsocks sends the sockets in
// batches of that many, and only a full batch's failure took the path
// that leaked.
const sendBatch = 252

// getsocksLeak sends _getsocks getsocksCalls times on the TCP stats
// socket that exposes the listeners and compares the worker's VmSize
// before and after. The first four bytes of each answer are the number
// of sockets the worker announces: fewer than a batch never reach the
// failing send, and decide nothing.
func getsocksLeak(ctx context.Context, n *node.Node) (string, error) {
	dir, err := n.MasterProc(ctx)
	if err != nil {
		return "", err
	}
	worker, err := onlyWorker(strings.TrimPrefix(dir, "/proc/"))
	if err != nil {
		return "", err
	}
	addr, err := n.DirectAddr(ctx, fixrun.Port("xfer"))
	if err != nil {
		return "", err
	}
	before, err := vmSizeKB(worker)
	if err != nil {
		return "", err
	}
	announced := -1
	for i := range getsocksCalls {
		got, err := getsocks(ctx, addr)
		if err != nil {
			return "", fmt.Errorf("_getsocks %d of %d: %w", i+1, getsocksCalls, err)
		}
		if announced == -1 {
			announced = got
		}
	}
	if announced < sendBatch {
		return "", fmt.Errorf("the worker announced %d sockets to _getsocks, fewer than a batch of %d: its transfer never reaches the send that fails over TCP", announced, sendBatch)
	}
	after, err := vmSizeKB(worker)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("worker VmSize: %d kB before %d _getsocks over TCP, %d kB after (sockets announced: %d)", before, getsocksCalls, after, announced), nil
}

// getsocks sends one _getsocks and reads the answer until the worker
// closes or 2 s pass; the first four bytes are the sockets announced.
func getsocks(ctx context.Context, addr string) (int, error) {
	d := net.Dialer{Timeout: 2 * time.Second}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := io.WriteString(c, "_getsocks\n"); err != nil {
		return 0, err
	}
	head := make([]byte, 4)
	if _, err := io.ReadFull(c, head); err != nil {
		return 0, fmt.Errorf("no count of sockets came back: %w", err)
	}
	_, _ = io.Copy(io.Discard, c) // until it closes, or the deadline
	return int(binary.NativeEndian.Uint32(head)), nil
}

// vmSizeKB is a process's VmSize in its /proc/<pid>/status.
func vmSizeKB(pid string) (int, error) {
	b, err := os.ReadFile(filepath.Join("/proc", pid, "status"))
	if err != nil {
		return 0, fmt.Errorf("reading the worker's status (harp must run on the Docker host, as root): %w", err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmSize:"); ok {
			return strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
		}
	}
	return 0, fmt.Errorf("no VmSize in /proc/%s/status", pid)
}

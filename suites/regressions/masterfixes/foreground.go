package masterfixes

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/harp-project/harp/harness/core/text"
	"github.com/harp-project/harp/harness/live/node"
)

// A foreground haproxy: the build's binary run in the node's container
// with -db and without -W (no master, no fork), beside the node's own
// master-worker. Some startup paths are taken only there. Harp finds it
// by its config's path in the Docker host's /proc and talks to it on a
// unix stats socket, reached through its /proc/<pid>/root.
type foreground struct {
	pid    string // on the Docker host
	sock   string // the stats socket, as the Docker host reaches it
	done   chan string
	cancel context.CancelFunc
}

// fgStart bounds the wait for the process and its stats socket.
const fgStart = 15 * time.Second

// startForeground writes cfg (which must hold `stats socket <sock> level
// admin`) to a file of its own and runs haproxy -db -f on it, until stop.
// A process that exits before it answers on its socket is an error
// carrying what it printed.
func startForeground(ctx context.Context, n *node.Node, name, cfg, sock string) (*foreground, error) {
	path := "/etc/harp/foreground-" + name + ".cfg"
	if err := n.WriteFile(ctx, path, []byte(cfg)); err != nil {
		return nil, fmt.Errorf("writing the foreground config: %w", err)
	}
	rctx, cancel := context.WithCancel(ctx)
	f := &foreground{done: make(chan string, 1), cancel: cancel}
	go func() {
		code, out, err := n.RunBinary(rctx, "-db", "-f", path)
		if err != nil {
			f.done <- err.Error()
			return
		}
		f.done <- fmt.Sprintf("exit %d: %s", code, text.OneLine(out, 300))
	}()
	var ended error
	err := node.Poll(ctx, fgStart, 100*time.Millisecond, func() (bool, error) {
		select {
		case out := <-f.done:
			ended = fmt.Errorf("haproxy -db -f %s ended before it answered on its stats socket: %s", path, out)
			return false, ended
		default:
		}
		if f.pid == "" {
			if f.pid = hostPidOf(path); f.pid == "" {
				return false, nil
			}
			f.sock = filepath.Join("/proc", f.pid, "root", sock)
		}
		out, err := f.ask("show info")
		return err == nil && strings.Contains(out, "Pid:"), nil
	})
	switch {
	case err == nil:
		return f, nil
	case ended != nil:
		cancel()
		return nil, ended
	}
	f.stop()
	if f.pid == "" {
		return nil, fmt.Errorf("no haproxy -db -f %s in the Docker host's /proc within %s: %w", path, fgStart, err)
	}
	return nil, fmt.Errorf("haproxy -db (host pid %s) never answered show info on %s within %s: %w", f.pid, f.sock, fgStart, err)
}

// hostPidOf is the Docker host's pid of the haproxy whose command line
// names path ("" when none).
func hostPidOf(path string) string {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if _, _, _, err := procStat(e.Name()); err != nil {
			continue
		}
		cmd, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(string(cmd), "\x00")
		if len(args) > 0 && strings.HasSuffix(args[0], "haproxy") && strings.Contains(string(cmd), "\x00"+path+"\x00") {
			return e.Name()
		}
	}
	return ""
}

// ask sends one command on the foreground process's stats socket and reads
// the whole answer (HAProxy closes a non-interactive session after it).
func (f *foreground) ask(cmd string) (string, error) {
	c, err := net.DialTimeout("unix", f.sock, 2*time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, cmd+"\n"); err != nil {
		return "", err
	}
	b, err := io.ReadAll(bufio.NewReader(c))
	return string(b), err
}

// status is a line of the process's /proc/<pid>/status ("" when absent).
func (f *foreground) status(field string) (string, error) {
	b, err := os.ReadFile(filepath.Join("/proc", f.pid, "status"))
	if err != nil {
		return "", err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && k == field {
			return strings.TrimSpace(v), nil
		}
	}
	return "", nil
}

// stop kills the process (harp runs as root on the Docker host) and waits
// for its run to end.
func (f *foreground) stop() {
	if f.pid == "" {
		f.cancel()
		return
	}
	var pid int
	if _, err := fmt.Sscan(f.pid, &pid); err == nil {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	select {
	case <-f.done:
	case <-time.After(5 * time.Second):
	}
	f.cancel()
}

// listening says whether the process holds the socket listening on
// 127.0.0.1:port: the inode /proc/<pid>/net/tcp gives that socket, among
// its descriptors' targets.
func (f *foreground) listening(port int) (bool, error) {
	b, err := os.ReadFile(filepath.Join("/proc", f.pid, "net", "tcp"))
	if err != nil {
		return false, err
	}
	local := fmt.Sprintf("0100007F:%04X", port)
	inode := ""
	for _, l := range strings.Split(string(b), "\n")[1:] {
		// sl local rem st tx:rx tr:when retrnsmt uid timeout inode
		if fs := strings.Fields(l); len(fs) >= 10 && fs[1] == local && fs[3] == "0A" {
			inode = fs[9]
		}
	}
	if inode == "" {
		return false, nil
	}
	targets, err := fdTargets(filepath.Join("/proc", f.pid, "fd"))
	if err != nil {
		return false, err
	}
	for _, t := range targets {
		if t == "socket:["+inode+"]" {
			return true, nil
		}
	}
	return false, nil
}

// The two foreground cases' own ports, inside the node's container (its
// own config binds none of them).
const (
	cpuMapPort = 18095
	xferPort   = 18096
)

// cpuMapForeground runs haproxy -db with cpu-map 1/1 0 and reads the
// CPUs its process may run on, beside those the node's master may.
func cpuMapForeground(ctx context.Context, n *node.Node) (string, error) {
	dir, err := n.MasterProc(ctx)
	if err != nil {
		return "", err
	}
	all, err := (&foreground{pid: filepath.Base(dir)}).status("Cpus_allowed_list")
	if err != nil || all == "" {
		return "", fmt.Errorf("the node master's Cpus_allowed_list: %q, %v", all, err)
	}
	if all == "0" {
		return "", fmt.Errorf("the node runs on CPU 0 alone: cpu-map 1/1 0 would change nothing to see")
	}
	const sock = "/tmp/harp-fg-cpumap.sock"
	cfg := fmt.Sprintf("global\n    nbthread 1\n    cpu-map 1/1 0\n    stats socket %s level admin\n\nfrontend fe\n    bind 127.0.0.1:%d\n", sock, cpuMapPort)
	f, err := startForeground(ctx, n, "cpumap", cfg, sock)
	if err != nil {
		return "", err
	}
	defer f.stop()
	cpus, err := f.status("Cpus_allowed_list")
	if err != nil || cpus == "" {
		return "", fmt.Errorf("the foreground process's Cpus_allowed_list: %q, %v", cpus, err)
	}
	return fmt.Sprintf("haproxy -db with cpu-map 1/1 0 may run on CPUs %s (the node's master on %s)", cpus, all), nil
}

// xferForeground runs haproxy -db with a stats socket that exposes its
// listeners, then shuts its frontend down on that socket: whether the
// process still holds the frontend's listening socket, before and after.
func xferForeground(ctx context.Context, n *node.Node) (string, error) {
	const sock = "/tmp/harp-fg-xfer.sock"
	cfg := fmt.Sprintf("global\n    nbthread 1\n    stats socket %s level admin expose-fd listeners\n\ndefaults\n    mode http\n    timeout connect 2s\n    timeout client 10s\n    timeout server 10s\n\nfrontend fe\n    bind 127.0.0.1:%d\n    http-request return status 200\n", sock, xferPort)
	f, err := startForeground(ctx, n, "xfer", cfg, sock)
	if err != nil {
		return "", err
	}
	defer f.stop()
	before, err := f.listening(xferPort)
	if err != nil {
		return "", err
	}
	if !before {
		return "", fmt.Errorf("haproxy -db holds no socket listening on 127.0.0.1:%d before the shutdown: nothing to follow", xferPort)
	}
	out, err := f.ask("shutdown frontend fe")
	if err != nil {
		return "", fmt.Errorf("shutdown frontend fe: %w", err)
	}
	after, err := f.listening(xferPort)
	if err != nil {
		return "", err
	}
	state := "closed"
	if after {
		state = "kept"
	}
	return fmt.Sprintf("listening socket of frontend fe after shutdown frontend: %s (answer %q)", state, strings.TrimSpace(out)), nil
}

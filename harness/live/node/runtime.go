package node

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	tcexec "github.com/testcontainers/testcontainers-go/exec"

	"github.com/harp-project/harp/harness/live/child"
	"github.com/harp-project/harp/harness/live/owner"
	"github.com/harp-project/harp/images"
)

// runtime is what runs the master: a container or a local process.
type runtime interface {
	addr(ctx context.Context, port string) (string, error)
	// directAddr reaches the port without a proxy between harp and
	// HAProxy (Docker's port proxy turns a client's abort into an orderly
	// close after the bytes it has read).
	directAddr(ctx context.Context, port string) (string, error)
	signal(ctx context.Context, sig syscall.Signal) error
	state(ctx context.Context) (running bool, exitCode int, err error)
	logs(ctx context.Context) (string, error)
	stop(ctx context.Context) error
	// kill signals one process of the node by its pid as the node sees it.
	kill(ctx context.Context, pid int, sig syscall.Signal) error
	// restart stops the master and its workers and starts them again.
	restart(ctx context.Context) error
	// writeFile replaces a file the node reads (its config, a map).
	writeFile(ctx context.Context, path string, data []byte) error
	// masterHostPID is the master's pid as this machine sees it.
	masterHostPID(ctx context.Context) (int, error)
	// exec runs a program beside the node (no shell: argv as given).
	exec(ctx context.Context, argv ...string) (code int, out string, err error)
	// execEnv is exec with more environment (VAR=VALUE) over the node's own.
	execEnv(ctx context.Context, env []string, argv ...string) (code int, out string, err error)
}

type containerRuntime struct {
	docker *client.Client
	c      *testcontainers.DockerContainer
}

func (b *containerRuntime) addr(ctx context.Context, port string) (string, error) {
	p, err := b.c.MappedPort(ctx, port)
	if err != nil {
		return "", err
	}
	return net.JoinHostPort("127.0.0.1", p.Port()), nil
}

func (b *containerRuntime) directAddr(ctx context.Context, port string) (string, error) {
	ip, err := b.c.ContainerIP(ctx)
	if err != nil {
		return "", err
	}
	if ip == "" {
		return "", fmt.Errorf("the container has no address of its own")
	}
	num, _, _ := strings.Cut(port, "/")
	return net.JoinHostPort(ip, num), nil
}

// signal goes to PID 1 of the container: the master.
func (b *containerRuntime) signal(ctx context.Context, sig syscall.Signal) error {
	_, err := b.docker.ContainerKill(ctx, b.c.GetContainerID(), client.ContainerKillOptions{Signal: fmt.Sprint(int(sig))})
	return err
}

func (b *containerRuntime) state(ctx context.Context) (bool, int, error) {
	st, err := b.c.State(ctx)
	if err != nil {
		return false, 0, err
	}
	return st.Running, st.ExitCode, nil
}

func (b *containerRuntime) logs(ctx context.Context) (string, error) {
	rc, err := b.c.Logs(ctx)
	if err != nil {
		return "", err
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	return string(data), err
}

func (b *containerRuntime) stop(ctx context.Context) error { return b.c.Terminate(ctx) }

func (b *containerRuntime) restart(ctx context.Context) error {
	grace := 10
	_, err := b.docker.ContainerRestart(ctx, b.c.GetContainerID(), client.ContainerRestartOptions{Timeout: &grace})
	return err
}

// kill finds the process among the container's (docker top gives host
// pids; /proc/<pid>/status's NSpid line ends with the pid the container
// sees) and signals it from here: the images carry no kill command.
func (b *containerRuntime) kill(ctx context.Context, pid int, sig syscall.Signal) error {
	top, err := b.docker.ContainerTop(ctx, b.c.GetContainerID(), client.ContainerTopOptions{})
	if err != nil {
		return err
	}
	col := slices.Index(top.Titles, "PID")
	for _, p := range top.Processes {
		if col < 0 || col >= len(p) {
			break
		}
		host, _ := strconv.Atoi(p[col])
		if status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", host)); err == nil && nsPID(string(status)) == pid {
			return syscall.Kill(host, sig)
		}
	}
	return fmt.Errorf("process %d not found among the container's (harp must run on the Docker host to signal it)", pid)
}

// writeFile copies into the container: the images carry no shell.
func (b *containerRuntime) writeFile(ctx context.Context, path string, data []byte) error {
	return b.c.CopyToContainer(ctx, data, path, 0o644)
}

func (b *containerRuntime) masterHostPID(ctx context.Context) (int, error) {
	st, err := b.c.State(ctx)
	if err != nil {
		return 0, err
	}
	if !st.Running || st.Pid == 0 {
		return 0, fmt.Errorf("the master is not running (exit code %d)", st.ExitCode)
	}
	return st.Pid, nil
}

func (b *containerRuntime) exec(ctx context.Context, argv ...string) (int, string, error) {
	return b.execEnv(ctx, nil, argv...)
}

func (b *containerRuntime) execEnv(ctx context.Context, env []string, argv ...string) (int, string, error) {
	opts := []tcexec.ProcessOption{tcexec.Multiplexed()}
	if len(env) > 0 {
		opts = append(opts, tcexec.WithEnv(env))
	}
	code, r, err := b.c.Exec(ctx, argv, opts...)
	if err != nil {
		return 0, "", err
	}
	out, err := io.ReadAll(io.LimitReader(r, 1<<20))
	return code, string(out), err
}

// nsPID is the innermost pid of a /proc/<pid>/status text (0 if none).
func nsPID(status string) int {
	for _, line := range strings.Split(status, "\n") {
		if rest, ok := strings.CutPrefix(line, "NSpid:"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				n, _ := strconv.Atoi(f[len(f)-1])
				return n
			}
		}
	}
	return 0
}

// processRuntime runs the master as a local process in its own process
// group, for baselines that measure what the container costs.
type processRuntime struct {
	args      []string
	dir       string
	ports     map[string]string
	out       lockedBuffer
	sanitized bool // an ASan build: ASAN_OPTIONS set

	mu   sync.Mutex // cmd and done change on restart
	cmd  *exec.Cmd
	done chan struct{}
}

// current is the running master and its end.
func (b *processRuntime) current() (*exec.Cmd, chan struct{}) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.cmd, b.done
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// StartLocal runs the image's host binary (src: and bin: builds) as a local
// master-worker process, with the stats socket and master CLI moved to free
// loopback ports. The config's own listeners bind as written.
func StartLocal(ctx context.Context, o Options) (*Node, error) {
	if o.ReadyTimeout == 0 {
		o.ReadyTimeout = 30 * time.Second
	}
	if o.Image.HostBinary == "" {
		return nil, fmt.Errorf("%s has no binary on this machine (deb: builds run only in containers)", o.Image.Name)
	}
	const statsLine = "stats socket ipv4@0.0.0.0:9998"
	if !strings.Contains(o.Config, statsLine) {
		return nil, fmt.Errorf("config has no %q line to move", statsLine)
	}
	b := &processRuntime{ports: map[string]string{}}
	for _, p := range []string{MasterPort, StatsPort} {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		b.ports[p] = net.JoinHostPort("127.0.0.1", port)
	}
	dir, err := os.MkdirTemp("", owner.TempPrefix("harp-local-"))
	if err != nil {
		return nil, err
	}
	b.dir = dir
	cfg := strings.Replace(o.Config, statsLine, "stats socket ipv4@"+b.ports[StatsPort], 1)
	// Every other port the config listens on or peers with moves to a free
	// one too: two local runs must never reach each other's processes.
	cfg, moved, err := localPorts(cfg, freePort)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	for from, to := range moved {
		b.ports[from+"/tcp"] = net.JoinHostPort("127.0.0.1", to)
	}
	cfgPath := filepath.Join(dir, "haproxy.cfg")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	b.args = append([]string{o.Image.HostBinary, "-W", "-db", "-f", cfgPath, "-S", "ipv4@" + b.ports[MasterPort]}, o.Args...)
	b.sanitized = o.Image.Sanitized()
	if err := b.start(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	n := &Node{Name: o.Name, Image: o.Image, be: b, masterAddr: b.ports[MasterPort], statsAddr: b.ports[StatsPort]}
	return n.ready(ctx, o, nil)
}

// portRe finds a port the config binds or connects to: ":8080",
// "127.0.0.1:10001", "ipv4@0.0.0.0:9998" (not "backend:8080", a name).
var portRe = regexp.MustCompile(`(^|[\s@])((?:\d{1,3}\.){3}\d{1,3})?:(\d{2,5})\b`)

// localPorts moves every port of a config to a free one (the same port to
// the same new one) and says which went where.
func localPorts(cfg string, free func() (string, error)) (string, map[string]string, error) {
	moved := map[string]string{}
	var err error
	out := portRe.ReplaceAllStringFunc(cfg, func(m string) string {
		sub := portRe.FindStringSubmatch(m)
		port := sub[3]
		if _, ok := moved[port]; !ok && err == nil {
			moved[port], err = free()
		}
		return sub[1] + sub[2] + ":" + moved[port]
	})
	return out, moved, err
}

func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	_, port, err := net.SplitHostPort(l.Addr().String())
	return port, err
}

func (b *processRuntime) addr(_ context.Context, port string) (string, error) {
	if a, ok := b.ports[port]; ok {
		return a, nil
	}
	// Other listeners bind on this machine as the config writes them.
	if num, proto, _ := strings.Cut(port, "/"); proto == "tcp" {
		return net.JoinHostPort("127.0.0.1", num), nil
	}
	return "", fmt.Errorf("a local node publishes no port %s", port)
}

func (b *processRuntime) directAddr(ctx context.Context, port string) (string, error) {
	return b.addr(ctx, port) // a local node is reached without a proxy
}

func (b *processRuntime) signal(_ context.Context, sig syscall.Signal) error {
	cmd, _ := b.current()
	return cmd.Process.Signal(sig)
}

func (b *processRuntime) state(context.Context) (bool, int, error) {
	cmd, done := b.current()
	select {
	case <-done:
		// 128+signal, as Docker says it: ExitCode is -1 for a signal.
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return false, 128 + int(ws.Signal()), nil
		}
		return false, cmd.ProcessState.ExitCode(), nil
	default:
		return true, 0, nil
	}
}

func (b *processRuntime) logs(context.Context) (string, error) { return b.out.String(), nil }

func (b *processRuntime) exec(ctx context.Context, argv ...string) (int, string, error) {
	return b.execEnv(ctx, nil, argv...)
}

func (b *processRuntime) execEnv(ctx context.Context, env []string, argv ...string) (int, string, error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), string(out), nil
	}
	return 0, string(out), err
}

func (b *processRuntime) writeFile(context.Context, string, []byte) error {
	return fmt.Errorf("replacing a file of a local process is not supported (its config's ports are remapped): run it in a container")
}

func (b *processRuntime) masterHostPID(context.Context) (int, error) {
	cmd, done := b.current()
	select {
	case <-done:
		return 0, fmt.Errorf("the master is not running")
	default:
	}
	return cmd.Process.Pid, nil
}

func (b *processRuntime) kill(_ context.Context, pid int, sig syscall.Signal) error {
	return syscall.Kill(pid, sig)
}

// stop ends the whole process group (master and workers).
// start runs the master in its own process group.
// start runs the master in its own process group; the previous one (if
// any) stays recorded until this one has started.
func (b *processRuntime) start() error {
	cmd := exec.Command(b.args[0], b.args[1:]...)
	cmd.Stdout, cmd.Stderr = &b.out, &b.out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Env = append(os.Environ(), child.Env+"="+owner.ID()) // swept if harp is killed
	if b.sanitized {
		cmd.Env = append(cmd.Env, "ASAN_OPTIONS="+images.ASanOptions)
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	b.mu.Lock()
	b.cmd, b.done = cmd, done
	b.mu.Unlock()
	return nil
}

func (b *processRuntime) stop(ctx context.Context) error {
	defer os.RemoveAll(b.dir)
	b.end()
	return nil
}

// end stops the whole process group (master and workers).
func (b *processRuntime) end() {
	cmd, done := b.current()
	syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
}

func (b *processRuntime) restart(context.Context) error {
	b.end()
	return b.start()
}

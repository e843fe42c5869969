// Package node runs one HAProxy instance in master-worker mode (-W -db) in a
// container, and gives the test process its master CLI, its stats socket,
// reloads that are observed rather than slept through, logs and exit status.
package node

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	tclog "github.com/testcontainers/testcontainers-go/log"
	tcnetwork "github.com/testcontainers/testcontainers-go/network"
	"github.com/testcontainers/testcontainers-go/wait"

	"github.com/harp-project/harp/harness/core/cliout"
	"github.com/harp-project/harp/harness/core/record"
	"github.com/harp-project/harp/harness/core/text"
	"github.com/harp-project/harp/harness/live/cli"
	"github.com/harp-project/harp/harness/live/engine"
	"github.com/harp-project/harp/harness/live/nemesis"
	"github.com/harp-project/harp/images"
)

// Ports inside the container.
const (
	MasterPort = "9999/tcp" // master CLI (-S)
	StatsPort  = "9998/tcp" // the worker's stats socket, from the config
	ConfigPath = "/etc/harp/haproxy.cfg"
)

// Options describe a node to start.
type Options struct {
	Image  *images.Image
	Config string // rendered haproxy.cfg
	RunID  string
	Name   string // what transcripts call this node
	// ReadyTimeout bounds the wait for the first worker (default 30 s).
	ReadyTimeout time.Duration
	// Ports are extra container ports to publish on loopback ("8080/tcp").
	Ports []string
	// Network, when set, is a harp network the node joins (besides the
	// default bridge), reachable there by its Aliases.
	Network *testcontainers.DockerNetwork
	Aliases []string
	// CPUSet pins the container to CPUs ("0-3"); empty: all of them.
	CPUSet string
	// CPUs limits the container to a share of CPU time (0.3: 30% of one
	// CPU); 0: no limit. For runs that check harp's verdicts on a starved
	// HAProxy.
	CPUs float64
	// IP is a fixed address on Network (which must have a subnet of its
	// own and be internal, so that the CLI stays published on the default
	// bridge): peers lines are resolved once at startup, so a node cut off and
	// reconnected must come back at the same address.
	IP netip.Addr
	// Hostname of the container (HAProxy's default local peer name).
	Hostname string
	// Args are more haproxy arguments (e.g. -L <local peer name>).
	Args []string
	// Files are more files the config reads (maps, ACL lists), by path.
	Files map[string]string
}

// Node is a running HAProxy master-worker instance: a container (Start), or
// a local process (StartLocal, for baselines).
type Node struct {
	Name  string
	Image *images.Image
	be    runtime

	mu         sync.Mutex // the addresses change on Restart
	masterAddr string
	statsAddr  string

	log record.Transcript
}

func init() {
	tclog.SetDefault(tclog.NewNoopLogger()) // harp prints its own progress
}

// Start creates and starts the container, then waits until the master CLI
// lists a worker. On any failure nothing is left running.
func Start(ctx context.Context, docker *client.Client, o Options) (*Node, error) {
	if o.ReadyTimeout == 0 {
		o.ReadyTimeout = 30 * time.Second
	}
	ports := append([]string{MasterPort, StatsPort}, o.Ports...)
	var extra []testcontainers.ContainerCustomizer
	switch {
	case o.Network != nil && o.IP.IsValid():
		// Stay on the default bridge, where the CLI ports are published, and
		// join the (internal) network at a fixed address before starting:
		// the node can then be cut off the network and still be observed.
		nw, ip, aliases := o.Network.ID, o.IP, o.Aliases
		extra = append(extra, testcontainers.WithAdditionalLifecycleHooks(testcontainers.ContainerLifecycleHooks{
			PostCreates: []testcontainers.ContainerHook{func(ctx context.Context, c testcontainers.Container) error {
				_, err := docker.NetworkConnect(ctx, nw, client.NetworkConnectOptions{Container: c.GetContainerID(),
					EndpointConfig: &network.EndpointSettings{Aliases: aliases, IPAMConfig: &network.EndpointIPAMConfig{IPv4Address: ip}}})
				return err
			}},
		}))
	case o.Network != nil:
		extra = append(extra, tcnetwork.WithNetwork(o.Aliases, o.Network))
	}
	if o.Hostname != "" {
		extra = append(extra, testcontainers.WithConfigModifier(func(c *container.Config) { c.Hostname = o.Hostname }))
	}
	if o.Image.Sanitized() {
		extra = append(extra, testcontainers.WithEnv(map[string]string{"ASAN_OPTIONS": images.ASanOptions}))
	}
	files := []testcontainers.ContainerFile{{Reader: strings.NewReader(o.Config), ContainerFilePath: ConfigPath, FileMode: 0o644}}
	for path, content := range o.Files {
		files = append(files, testcontainers.ContainerFile{Reader: strings.NewReader(content), ContainerFilePath: path, FileMode: 0o644})
	}
	c, err := testcontainers.Run(ctx, o.Image.Tag, append([]testcontainers.ContainerCustomizer{
		testcontainers.WithEntrypoint(images.Binary),
		testcontainers.WithCmd(append([]string{"-W", "-db", "-f", ConfigPath, "-S", "ipv4@0.0.0.0:9999"}, o.Args...)...),
		testcontainers.WithExposedPorts(ports...),
		testcontainers.WithLabels(engine.Labels(o.RunID)),
		testcontainers.WithFiles(files...),
		testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
			// Published on loopback only.
			hc.PortBindings = network.PortMap{}
			hc.CpusetCpus = o.CPUSet
			hc.NanoCPUs = int64(o.CPUs * 1e9)
			// A worker that dies on a signal leaves a core for its backtrace.
			hc.Ulimits = append(hc.Ulimits, &container.Ulimit{Name: "core", Soft: -1, Hard: -1})
			for _, p := range ports {
				hc.PortBindings[network.MustParsePort(p)] = []network.PortBinding{{HostIP: netip.MustParseAddr("127.0.0.1")}}
			}
		}),
		testcontainers.WithWaitStrategy(wait.ForMappedPort(MasterPort), wait.ForMappedPort(StatsPort)),
	}, extra...)...)
	if err != nil {
		if c != nil {
			_ = c.Terminate(context.WithoutCancel(ctx))
		}
		return nil, fmt.Errorf("starting %s on %s: %w", o.Name, o.Image.Name, err)
	}
	be := &containerRuntime{docker: docker, c: c}
	n := &Node{Name: o.Name, Image: o.Image, be: slowed{be}}
	if n.masterAddr, err = be.addr(ctx, MasterPort); err == nil {
		n.statsAddr, err = be.addr(ctx, StatsPort)
	}
	return n.ready(ctx, o, err)
}

// ready waits for the first worker; on failure it stops the node.
func (n *Node) ready(ctx context.Context, o Options, err error) (*Node, error) {
	if err == nil {
		err = n.waitReady(ctx, o.ReadyTimeout)
	}
	if err != nil {
		logs, _ := n.Logs(context.WithoutCancel(ctx))
		n.Stop(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("%s on %s did not become ready: %w\nlast log lines:\n%s", o.Name, o.Image.Name, err, text.LastLines(logs, 15))
	}
	return n, nil
}

// ContainerID is the node's container (empty for a local process).
func (n *Node) ContainerID() string {
	if b, ok := n.containerRuntime(); ok {
		return b.c.GetContainerID()
	}
	return ""
}

// containerRuntime is the node's container runtime, under the nemesis's
// wrapper (false for a local process).
func (n *Node) containerRuntime() (*containerRuntime, bool) {
	be := n.be
	if s, ok := be.(slowed); ok {
		be = s.runtime
	}
	b, ok := be.(*containerRuntime)
	return b, ok
}

// Addr is the loopback address where a published container port is reached.
func (n *Node) Addr(ctx context.Context, port string) (string, error) { return n.be.addr(ctx, port) }

// DirectAddr is the port on the node's own address, with no proxy in
// between: a client's abort reaches HAProxy as one.
func (n *Node) DirectAddr(ctx context.Context, port string) (string, error) {
	return n.be.directAddr(ctx, port)
}

// waitReady polls the master CLI until it lists a current worker that
// answers through it (3.4 lists a starting worker a moment before the
// master can reach its CLI).
func (n *Node) waitReady(ctx context.Context, timeout time.Duration) error {
	var last error
	err := Poll(ctx, timeout, 100*time.Millisecond, func() (bool, error) {
		if running, code, err := n.be.state(ctx); err == nil && !running {
			return false, fmt.Errorf("the master exited with code %d", code)
		}
		procs, err := n.Procs(ctx)
		if err != nil {
			last = err
			return false, nil
		}
		w, ok := procs.Current()
		if !ok {
			return false, nil
		}
		if _, err := n.Worker(ctx, w.PID, "show info"); err != nil {
			last = err
			return false, nil
		}
		return true, nil
	})
	if err != nil && last != nil {
		return fmt.Errorf("%w (last master CLI error: %v)", err, last)
	}
	return err
}

// Master runs a master CLI command.
func (n *Node) Master(ctx context.Context, cmd string) (string, error) {
	return n.exchange(ctx, "master", n.addrs(true), cmd)
}

// Worker runs a runtime command on one worker, addressed by pid through the
// master CLI, so that during a reload there is no doubt which process answers.
func (n *Node) Worker(ctx context.Context, pid int, cmd string) (string, error) {
	out, err := n.exchange(ctx, fmt.Sprintf("worker %d", pid), n.addrs(true), fmt.Sprintf("@!%d %s", pid, cmd))
	if err == nil && strings.HasPrefix(out, "Can't find the target PID") {
		err = fmt.Errorf("worker %d is gone", pid)
	}
	return out, err
}

// AskSocket sends a command to another stats socket of the node (a
// published container port such as "9995/tcp"), into the transcript. The
// answer is returned even when empty: a silent success says something.
func (n *Node) AskSocket(ctx context.Context, port, cmd string) (string, error) {
	addr, err := n.Addr(ctx, port)
	if err != nil {
		return "", err
	}
	return n.ask(ctx, "socket "+strings.TrimSuffix(port, "/tcp"), cmd, func() (string, error) { return cli.Ask(ctx, "tcp", addr, cmd) })
}

// Stats runs a command on the stats socket of whichever worker holds it.
func (n *Node) Stats(ctx context.Context, cmd string) (string, error) {
	return n.exchange(ctx, "stats", n.addrs(false), cmd)
}

// addrs is the master CLI's address, or the stats socket's.
func (n *Node) addrs(master bool) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	if master {
		return n.masterAddr
	}
	return n.statsAddr
}

// Procs parses the master's `show proc`.
func (n *Node) Procs(ctx context.Context) (cliout.Procs, error) {
	out, err := n.Master(ctx, "show proc")
	if err != nil {
		return cliout.Procs{}, err
	}
	return cliout.ParseProcs(out)
}

// CurrentWorker is the pid of the worker that serves traffic now (see
// cliout.Procs.Serving).
func (n *Node) CurrentWorker(ctx context.Context) (int, error) {
	procs, err := n.Procs(ctx)
	if err != nil {
		return 0, err
	}
	w, ok := procs.Serving()
	if !ok {
		return 0, fmt.Errorf("the master lists no current worker")
	}
	return w.PID, nil
}

// exchange sends one command on a fresh connection (the CLI's
// non-interactive mode) and reads the answer until the server closes.
func (n *Node) exchange(ctx context.Context, target, addr, cmd string) (string, error) {
	return n.ask(ctx, target, cmd, func() (string, error) { return roundTrip(ctx, addr, cmd) })
}

// ask runs one exchange into the transcript. A read that did not get
// through (harp's side: a timeout, a connection closed before an answer)
// is asked again, twice: one lost exchange is no observation. A command
// that changes state is sent again only when it never reached the socket.
func (n *Node) ask(ctx context.Context, target, cmd string, do func() (string, error)) (string, error) {
	for attempt := 1; ; attempt++ {
		out, err := nemesis.CLI(ctx, target, cmd, do)
		ex := record.Exchange{At: time.Now(), Target: target, Command: cmd, Output: out}
		if err != nil {
			ex.Err = err.Error()
		}
		n.log.Add(ex)
		if err == nil || attempt == 3 || !(readOnly(cmd) || errors.Is(err, cli.ErrNotSent)) || ctx.Err() != nil {
			return out, err
		}
		select {
		case <-ctx.Done():
			return out, err
		case <-time.After(time.Duration(attempt) * 100 * time.Millisecond):
		}
	}
}

// readOnly says whether a command only reads (`show ...`, also through
// the master CLI's @!<pid> prefix): asking it again changes nothing.
func readOnly(cmd string) bool {
	if strings.HasPrefix(cmd, "@") {
		_, cmd, _ = strings.Cut(cmd, " ")
	}
	return strings.HasPrefix(cmd, "show ") && !strings.Contains(cmd, ";")
}

func roundTrip(ctx context.Context, addr, cmd string) (string, error) {
	out, err := cli.Ask(ctx, "tcp", addr, cmd)
	if err == nil && out == "" && !silentOnSuccess(cmd) {
		// HAProxy ends every answer with a newline, even an empty one: no
		// byte at all is a connection closed before an answer (Docker's
		// port proxy accepting before HAProxy listens, or a worker that
		// died while the command ran).
		return "", fmt.Errorf("%s: the connection closed without an answer to %q", addr, cmd)
	}
	return out, err
}

// Transcript returns the exchanges since index from (see Mark).
func (n *Node) Transcript(from int) []record.Exchange { return n.log.Since(from) }

// Mark is the current transcript length, to slice one trial's exchanges.
func (n *Node) Mark() int { return n.log.Mark() }

// Signal sends a signal to the master.
func (n *Node) Signal(ctx context.Context, sig syscall.Signal) error { return n.be.signal(ctx, sig) }

// KillWorker sends a signal to one process of the node (a worker, by the
// pid `show proc` gives): a trigger for suites about worker deaths.
func (n *Node) KillWorker(ctx context.Context, pid int, sig syscall.Signal) error {
	return n.be.kill(ctx, pid, sig)
}

// Restart stops the node's master and workers (SIGTERM, then SIGKILL after
// 10 s) and starts them again with the same config, then waits for the
// first worker: nothing held in memory survives it.
func (n *Node) Restart(ctx context.Context, timeout time.Duration) error {
	if err := n.be.restart(ctx); err != nil {
		return fmt.Errorf("restarting %s: %w", n.Name, err)
	}
	// Docker may publish the ports anew.
	master, err := n.be.addr(ctx, MasterPort)
	if err != nil {
		return err
	}
	stats, err := n.be.addr(ctx, StatsPort)
	if err != nil {
		return err
	}
	n.mu.Lock()
	n.masterAddr, n.statsAddr = master, stats
	n.mu.Unlock()
	return n.waitReady(ctx, timeout)
}

// Running says whether the master still runs, else its exit code.
func (n *Node) Running(ctx context.Context) (bool, int, error) { return n.be.state(ctx) }

// Logs returns everything HAProxy wrote to stdout and stderr.
func (n *Node) Logs(ctx context.Context) (string, error) { return n.be.logs(ctx) }

// Exits lists the worker exits the master logged so far.
func (n *Node) Exits(ctx context.Context) ([]cliout.WorkerExit, error) {
	logs, err := n.Logs(ctx)
	if err != nil {
		return nil, err
	}
	return cliout.ParseWorkerExits(logs), nil
}

// WriteFile replaces a file inside the node, e.g. ConfigPath before a
// reload that must read another config.
func (n *Node) WriteFile(ctx context.Context, path string, data []byte) error {
	if err := n.be.writeFile(ctx, path, data); err != nil {
		return fmt.Errorf("writing %s in %s: %w", path, n.Name, err)
	}
	return nil
}

// RunBinary runs the build's haproxy inside the node with args (beside the
// running master, which it does not touch): its exit status (128+N when a
// signal N ended it) and what it printed. Only for commands that end by
// themselves (-vv, -c, a config that cannot start): ctx bounds the wait,
// not the process.
func (n *Node) RunBinary(ctx context.Context, args ...string) (code int, out string, err error) {
	return n.RunBinaryEnv(ctx, nil, args...)
}

// RunBinaryEnv is RunBinary with more environment (VAR=VALUE, over the
// node's own: ASAN_OPTIONS with leak detection on, for one run).
func (n *Node) RunBinaryEnv(ctx context.Context, env []string, args ...string) (code int, out string, err error) {
	code, out, err = n.be.execEnv(ctx, env, append([]string{images.Binary}, args...)...)
	if err != nil {
		return 0, out, fmt.Errorf("haproxy %s in %s: %w", strings.Join(args, " "), n.Name, err)
	}
	return code, out, nil
}

// CheckConfig runs the build's `haproxy -c` on a config file inside the
// node: whether that build can load it, and what it said.
func (n *Node) CheckConfig(ctx context.Context, path string) (ok bool, out string, err error) {
	code, out, err := n.be.exec(ctx, images.Binary, "-c", "-f", path)
	if err != nil {
		return false, out, fmt.Errorf("haproxy -c -f %s in %s: %w", path, n.Name, err)
	}
	return code == 0, out, nil
}

// MasterProc is the master's /proc directory on this machine (harp runs
// on the Docker host): its fds, environment, status. A re-executed master
// keeps its pid, so the directory outlives reloads.
func (n *Node) MasterProc(ctx context.Context) (string, error) {
	pid, err := n.be.masterHostPID(ctx)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("/proc/%d", pid), nil
}

// MasterStatus is the master's /proc/<pid>/status, read from this machine
// (signal masks and pending signals are evidence of a master that stopped
// taking signals).
func (n *Node) MasterStatus(ctx context.Context) (cliout.ProcStatus, error) {
	dir, err := n.MasterProc(ctx)
	if err != nil {
		return cliout.ProcStatus{}, err
	}
	raw, err := os.ReadFile(dir + "/status")
	if err != nil {
		return cliout.ProcStatus{}, fmt.Errorf("reading the master's status (harp must run on the Docker host): %w", err)
	}
	return cliout.ParseProcStatus(string(raw))
}

// Stop removes the node (container, or process group).
func (n *Node) Stop(ctx context.Context) error { return n.be.stop(ctx) }

// silentOnSuccess says whether a command may close the connection without
// a byte when it works: only the master's own reload (2.6 re-executes the
// master and answers nothing). Every other command, silent ones (set,
// clear, enable, ...) included, answers at least a newline from 2.6 to 3.4.
func silentOnSuccess(cmd string) bool {
	verb, _, _ := strings.Cut(cmd, " ")
	return verb == "reload"
}

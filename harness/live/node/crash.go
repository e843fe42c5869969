package node

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/moby/moby/client"

	"github.com/harp-project/harp/harness/core/cliout"
	"github.com/harp-project/harp/harness/core/text"
	"github.com/harp-project/harp/harness/core/verdict"
	"github.com/harp-project/harp/harness/live/child"
	"github.com/harp-project/harp/harness/live/cli"
	"github.com/harp-project/harp/harness/live/owner"
	"github.com/harp-project/harp/images"
)

// Crashes gives, for every HAProxy process of the node that died on a
// signal (a worker, an old worker, the master) or wrote an AddressSanitizer
// report, what a maintainer asks for: the signal, the last log lines, a
// backtrace of every thread from its own core dump, read by this machine's
// gdb with the container's own binary and libraries, and its signature.
// err says what could not be checked (the logs, the master's state): the
// crashes seen so far come with it.
func (n *Node) Crashes(ctx context.Context) ([]verdict.Crash, error) {
	n.settle(ctx)
	logs, err := n.Logs(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading its logs: %w", err)
	}
	// The master itself may die on a signal: the container exits with
	// 128+signal without the master's own "Exiting... (N)" line (with it,
	// the master passed on a worker's exit code). Docker may still be
	// copying the last lines: the line gets a moment to arrive.
	running, code, stateErr := n.Running(ctx)
	masterDied := stateErr == nil && !running && dumpsCore(code)
	if _, orderly := cliout.MasterExit(logs); masterDied && !orderly {
		logs, orderly = n.waitMasterExitLine(ctx, logs)
		masterDied = !orderly
	} else if orderly {
		masterDied = false
	}
	masterCode := 0
	if masterDied {
		masterCode = code
	}
	out := diedOnSignal(n.Name, logs, masterCode)
	out = withASan(n.withBacktraces(ctx, out), cliout.ParseASan(logs), n.Name, logs)
	for i := range out {
		if out[i].Signature = verdict.Signature(out[i].Backtrace); out[i].Signature == "" {
			out[i].Signature = verdict.Signature(out[i].ASan)
		}
	}
	if stateErr != nil {
		return out, fmt.Errorf("reading whether its master runs: %w", stateErr)
	}
	return out, nil
}

// diedOnSignal lists the processes the master's log (and, when it is not
// 0, the master's own exit code) says died on a signal that dumps a core.
func diedOnSignal(node, logs string, masterCode int) []verdict.Crash {
	var out []verdict.Crash
	for _, e := range cliout.ParseWorkerExits(logs) {
		if !dumpsCore(e.Code) {
			continue // an exit, or a stop harp asked for (SIGTERM, SIGKILL)
		}
		kind := "old worker" // "Former worker": one a reload replaced
		if e.Current {
			kind = "worker"
		}
		out = append(out, verdict.Crash{Node: node, PID: e.PID, Code: e.Code, Signal: e.Reason, Process: kind, LastLog: text.LastLines(logs, 60)})
	}
	if masterCode != 0 {
		out = append(out, verdict.Crash{Node: node + " (master)", PID: 1, Code: masterCode, Signal: signalName(masterCode - 128), Process: "master", LastLog: text.LastLines(logs, 60)})
	}
	return out
}

// withASan adds each AddressSanitizer report to its process's crash (an
// ASan build aborts on the first error); a report whose process did not
// die on a signal (ASAN_OPTIONS changed by hand) is a crash of its own.
func withASan(out []verdict.Crash, reports []cliout.ASanReport, node, logs string) []verdict.Crash {
	for _, r := range reports {
		found := false
		for i := range out {
			if out[i].PID == r.PID && out[i].ASan == "" {
				out[i].ASan, out[i].ASanSummary, found = r.Text, r.Summary, true
				if out[i].Backtrace == "" {
					out[i].Note = "no core: an ASan build runs without one (" + images.ASanOptions + "); the AddressSanitizer report has the stacks"
				}
				break
			}
		}
		if !found {
			out = append(out, verdict.Crash{Node: node, PID: r.PID, Signal: "AddressSanitizer: " + r.Kind, LastLog: text.LastLines(logs, 60), ASan: r.Text, ASanSummary: r.Summary})
		}
	}
	return out
}

// withBacktraces adds to each crash the backtrace of its own core: the
// kernel names it core.<pid> when core_uses_pid is set (every crash keeps
// its core), else core (each crash's overwrites the one before). A core is
// matched to its crash by its threads' ids, which are the crashed
// process's pids in the container.
func (n *Node) withBacktraces(ctx context.Context, out []verdict.Crash) []verdict.Crash {
	if len(out) == 0 {
		return nil
	}
	bts, note := n.backtraces(ctx, out)
	for i := range out {
		if bt, ok := bts[out[i].PID]; ok {
			out[i].Backtrace, out[i].Note = bt.text, bt.note
			continue
		}
		switch {
		case note != "":
			out[i].Note = note
		case len(out) > 1:
			out[i].Note = fmt.Sprintf("no core of process %d in the container: the kernel keeps one core named core unless core_uses_pid is set (sysctl kernel.core_uses_pid=1), and %d processes died", out[i].PID, len(out))
		default:
			out[i].Note = fmt.Sprintf("no core of process %d in the container: it may not have been dumpable", out[i].PID)
		}
	}
	return out
}

// settle lets the master handle a worker's death before its log is read.
// A master that answers its CLI has run its event loop, where its SIGCHLD
// handler logs the exit, since the worker died; one that does not answer
// is going down (exit-on-failure) and is given a few seconds to.
func (n *Node) settle(ctx context.Context) {
	if running, _, err := n.Running(ctx); err != nil || !running {
		return
	}
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if out, err := cli.Ask(sctx, "tcp", n.addrs(true), "show proc"); err == nil {
		// Not in the transcript: the trials are over. A listed worker
		// that does not answer may still be dying (writing its core):
		// its exit is only logged once it is gone.
		if procs, err := cliout.ParseProcs(out); err == nil && n.answers(ctx, procs) {
			return
		}
		n.waitSilent(ctx)
		return
	}
	for sctx.Err() == nil {
		if running, _, err := n.Running(sctx); err != nil || !running {
			return
		}
		select {
		case <-sctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// answers says whether every worker the master lists answers a command.
func (n *Node) answers(ctx context.Context, procs cliout.Procs) bool {
	for _, w := range append(append([]cliout.Proc(nil), procs.Workers...), procs.OldWorkers...) {
		actx, cancel := context.WithTimeout(ctx, 2*time.Second)
		out, err := cli.Ask(actx, "tcp", n.addrs(true), fmt.Sprintf("@!%d show info", w.PID))
		cancel()
		if err != nil || !strings.Contains(out, "Pid:") {
			return false
		}
	}
	return true
}

// waitSilent waits, up to 20s, until the master lists only workers that
// answer or stops: a dying worker's core can take seconds to write on a
// loaded machine.
func (n *Node) waitSilent(ctx context.Context) {
	Poll(ctx, 20*time.Second, 250*time.Millisecond, func() (bool, error) {
		if running, _, err := n.Running(ctx); err != nil || !running {
			return true, nil
		}
		actx, cancel := context.WithTimeout(ctx, 2*time.Second)
		out, err := cli.Ask(actx, "tcp", n.addrs(true), "show proc")
		cancel()
		if err != nil {
			return false, nil // the master going down: see again
		}
		procs, err := cliout.ParseProcs(out)
		return err == nil && n.answers(ctx, procs), nil
	})
}

// waitMasterExitLine reads the logs again for up to two seconds until they
// hold the master's own exit line.
func (n *Node) waitMasterExitLine(ctx context.Context, logs string) (string, bool) {
	orderly := false
	Poll(ctx, 2*time.Second, 200*time.Millisecond, func() (bool, error) {
		l, err := n.Logs(ctx)
		if err != nil {
			return false, err
		}
		logs = l
		_, orderly = cliout.MasterExit(logs)
		return orderly, nil
	})
	return logs, orderly
}

// dumpsCore says whether an exit code is 128 + a signal that kills with a
// core: a crash, not an exit or a stop harp (or docker) asked for.
func dumpsCore(code int) bool {
	switch syscall.Signal(code - 128) {
	case syscall.SIGSEGV, syscall.SIGBUS, syscall.SIGABRT, syscall.SIGILL, syscall.SIGFPE, syscall.SIGTRAP, syscall.SIGSYS, syscall.SIGQUIT:
		return code > 128
	}
	return false
}

func signalName(sig int) string {
	name := syscall.Signal(sig).String()
	if name == "" {
		return fmt.Sprintf("signal %d", sig)
	}
	return strings.ToUpper(name[:1]) + name[1:]
}

const maxBacktrace = 256 << 10

// coreDir is where the kernel writes a process's core when its pattern is
// the default "core": the process's working directory, / in harp's images.
const coreDir = "/"

type backtrace struct{ text, note string }

// backtraces reads the cores the crashed processes left (core.<pid> for
// each, then core) with gdb: the backtraces by pid, or why there are none.
func (n *Node) backtraces(ctx context.Context, crashes []verdict.Crash) (map[int]backtrace, string) {
	be, ok := n.containerRuntime()
	if !ok {
		return nil, "no backtrace for a local process (its core goes wherever this machine's core_pattern says)"
	}
	if p, err := os.ReadFile("/proc/sys/kernel/core_pattern"); err == nil {
		if pat := strings.TrimSpace(string(p)); pat != "core" {
			return nil, fmt.Sprintf("this machine's kernel core_pattern is %q, not \"core\": the container keeps no core to read (set it to core to get backtraces)", pat)
		}
	}
	gdb, err := exec.LookPath("gdb")
	if err != nil {
		return nil, "gdb is not installed on this machine (apt-get install gdb): no backtrace"
	}
	id := be.c.GetContainerID()
	var cores []string
	for _, c := range crashes {
		name := fmt.Sprintf("core.%d", c.PID)
		if _, err := be.docker.ContainerStatPath(ctx, id, client.ContainerStatPathOptions{Path: coreDir + name}); err == nil {
			cores = append(cores, name)
		}
	}
	if _, err := be.docker.ContainerStatPath(ctx, id, client.ContainerStatPathOptions{Path: coreDir + "core"}); err == nil {
		cores = append(cores, "core")
	}
	if len(cores) == 0 {
		return nil, ""
	}
	dir, err := os.MkdirTemp("", owner.TempPrefix("harp-core-"))
	if err != nil {
		return nil, err.Error()
	}
	defer os.RemoveAll(dir)
	// The container's whole filesystem (the binary and the libraries it ran
	// with, wherever the image keeps them) as gdb's sysroot: harp's images
	// are 20 to 130 MB.
	if err := copyOut(ctx, be.docker, id, "/", dir); err != nil {
		return nil, fmt.Sprintf("copying the container's files out: %v", err)
	}
	out := map[int]backtrace{}
	for _, core := range cores {
		bt, note := readCore(ctx, gdb, dir, filepath.Join(dir, coreDir, core))
		pid, ok := coreOwner(core, bt, crashes)
		if !ok {
			pid = crashes[len(crashes)-1].PID // the last to dump wrote the core
			note = strings.TrimSpace(note + fmt.Sprintf(" (no thread of the core %s is a crashed process: taken as the last crash's)", core))
		}
		if _, taken := out[pid]; taken {
			continue // core.<pid> was read first: a plain core is an older one
		}
		out[pid] = backtrace{bt, note}
	}
	return out, ""
}

// coreOwner is the crashed process a core belongs to: core.<pid>'s, or the
// one whose pid is a thread id (LWP) of the core.
func coreOwner(core, bt string, crashes []verdict.Crash) (int, bool) {
	if p, ok := strings.CutPrefix(core, "core."); ok {
		for _, c := range crashes {
			if fmt.Sprint(c.PID) == p {
				return c.PID, true
			}
		}
	}
	lwps := map[string]bool{}
	for _, m := range lwpRe.FindAllStringSubmatch(bt, -1) {
		lwps[m[1]] = true
	}
	for i := len(crashes) - 1; i >= 0; i-- {
		if lwps[fmt.Sprint(crashes[i].PID)] {
			return crashes[i].PID, true
		}
	}
	return 0, false
}

var lwpRe = regexp.MustCompile(`\bLWP (\d+)\b`)

// readCore runs gdb on a core: the threads, the crashing thread's `bt full`
// (marked, for its signature), then `thread apply all bt full`.
func readCore(ctx context.Context, gdb, sysroot, core string) (bt, note string) {
	// No script from the image runs in this machine's gdb: auto-loading is
	// off; libthread_db comes from this machine's own libraries.
	out, err := child.Output(ctx, 2*time.Minute, gdb, "-batch", "-nx", "-iex", "set auto-load off",
		"-ex", "set debuginfod enabled off", "-ex", "set sysroot "+sysroot, "-ex", "set libthread-db-search-path /lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu",
		"-ex", "file "+filepath.Join(sysroot, images.Binary), "-ex", "core-file "+core,
		"-ex", "info threads",
		"-ex", `echo \n`+verdict.CrashingThreadMarker+`\n`, "-ex", "bt full",
		"-ex", `echo \n== harp: every thread (thread apply all bt full) ==\n`, "-ex", "thread apply all bt full")
	if err != nil && len(out) == 0 {
		return "", "gdb failed: " + err.Error()
	}
	bt = strings.TrimSpace(string(out))
	if len(bt) > maxBacktrace { // a runaway recursion prints frames without end
		bt = bt[:maxBacktrace] + "\n[backtrace cut at 256 KiB]"
	}
	if strings.Contains(bt, "no debugging symbols") || strings.Contains(bt, "No symbol table") {
		note = "the binary carries no debug symbols: frames show addresses and exported names only"
	}
	return bt, note
}

// maxCopy bounds what crash evidence copies out of a container (harp's
// images are 20 to 130 MB).
const maxCopy = 1 << 30

// copyOut extracts a path of a (possibly stopped) container under dir,
// keeping its path.
func copyOut(ctx context.Context, docker *client.Client, id, path, dir string) error {
	res, err := docker.CopyFromContainer(ctx, id, client.CopyFromContainerOptions{SourcePath: path})
	if err != nil {
		return err
	}
	defer res.Content.Close()
	base := filepath.Join(dir, filepath.Dir(path))
	tr := tar.NewReader(res.Content)
	var copied int64
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		dst := filepath.Join(base, h.Name)
		if !strings.HasPrefix(dst, dir+string(filepath.Separator)) {
			continue // a name that climbs out of dir
		}
		switch h.Typeflag {
		case tar.TypeDir:
			os.MkdirAll(dst, 0o755)
		case tar.TypeSymlink:
			os.MkdirAll(filepath.Dir(dst), 0o755)
			link := h.Linkname
			if filepath.IsAbs(link) { // inside the copy, not this machine's files
				link = filepath.Join(dir, link)
			}
			os.Symlink(link, dst)
		case tar.TypeReg:
			if copied += h.Size; copied > maxCopy {
				return fmt.Errorf("the container's files exceed %d MiB: not copied", maxCopy>>20)
			}
			os.MkdirAll(filepath.Dir(dst), 0o755)
			f, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
			if err != nil {
				return err
			}
			_, err = io.Copy(f, tr)
			f.Close()
			if err != nil {
				return err
			}
			os.Chtimes(dst, h.ModTime, h.ModTime) // else gdb warns the binary is newer than the core
		}
	}
}

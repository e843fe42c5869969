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
	"strings"
	"syscall"
	"time"

	"github.com/moby/moby/client"

	"github.com/harp-project/harp/harness/child"
	"github.com/harp-project/harp/harness/cli"
	"github.com/harp-project/harp/harness/cliout"
	"github.com/harp-project/harp/harness/owner"
	"github.com/harp-project/harp/harness/text"
	"github.com/harp-project/harp/harness/verdict"
	"github.com/harp-project/harp/images"
)

// Crashes gives, for every worker the master saw die on a signal, what a
// maintainer asks for: the signal, the last log lines, and for the last
// one a backtrace of every thread from its core dump, read by this
// machine's gdb with the container's own binary and libraries.
func (n *Node) Crashes(ctx context.Context) ([]verdict.Crash, error) {
	n.settle(ctx)
	logs, err := n.Logs(ctx)
	if err != nil {
		return nil, err
	}
	// The master itself may die on a signal: the container exits with
	// 128+signal without the master's own "Exiting... (N)" line (with it,
	// the master passed on a worker's exit code). Docker may still be
	// copying the last lines: the line gets a moment to arrive.
	running, code, err := n.Running(ctx)
	masterDied := err == nil && !running && dumpsCore(code)
	if _, orderly := cliout.MasterExit(logs); masterDied && !orderly {
		logs, orderly = n.waitMasterExitLine(ctx, logs)
		masterDied = !orderly
	} else if orderly {
		masterDied = false
	}
	var out []verdict.Crash
	for _, e := range cliout.ParseWorkerExits(logs) {
		if !dumpsCore(e.Code) {
			continue // an exit, or a stop harp asked for (SIGTERM, SIGKILL)
		}
		out = append(out, verdict.Crash{Node: n.Name, PID: e.PID, Code: e.Code, Signal: e.Reason, LastLog: text.LastLines(logs, 60)})
	}
	if masterDied {
		out = append(out, verdict.Crash{Node: n.Name + " (master)", PID: 1, Code: code, Signal: signalName(code - 128), LastLog: text.LastLines(logs, 60)})
	}
	return withASan(n.withBacktrace(ctx, out), cliout.ParseASan(logs), n.Name, logs), nil
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

// withBacktrace adds to the last crash the backtrace of its core.
func (n *Node) withBacktrace(ctx context.Context, out []verdict.Crash) []verdict.Crash {
	if len(out) == 0 {
		return nil
	}
	last := &out[len(out)-1]
	last.Backtrace, last.Note = n.backtrace(ctx)
	if len(out) > 1 {
		last.Note = strings.TrimSpace(last.Note + fmt.Sprintf(" (the core is the last crash's: %d workers died on a signal)", len(out)))
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
	if _, err := cli.Ask(sctx, "tcp", n.addrs(true), "show proc"); err == nil {
		return // not in the transcript: the trials are over
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

// corePath is where the kernel writes a worker's core when its pattern is
// the default "core": the worker's working directory, / in harp's images.
const corePath = "/core"

func (n *Node) backtrace(ctx context.Context) (bt, note string) {
	be, ok := n.be.(*containerRuntime)
	if !ok {
		return "", "no backtrace for a local process (its core goes wherever this machine's core_pattern says)"
	}
	if p, err := os.ReadFile("/proc/sys/kernel/core_pattern"); err == nil {
		if pat := strings.TrimSpace(string(p)); pat != "core" {
			return "", fmt.Sprintf("this machine's kernel core_pattern is %q, not \"core\": the container keeps no core to read (set it to core to get backtraces)", pat)
		}
	}
	gdb, err := exec.LookPath("gdb")
	if err != nil {
		return "", "gdb is not installed on this machine (apt-get install gdb): no backtrace"
	}
	dir, err := os.MkdirTemp("", owner.TempPrefix("harp-core-"))
	if err != nil {
		return "", err.Error()
	}
	defer os.RemoveAll(dir)
	id := be.c.GetContainerID()
	if _, err := be.docker.ContainerStatPath(ctx, id, client.ContainerStatPathOptions{Path: corePath}); err != nil {
		return "", fmt.Sprintf("no core dump in the container (%v): the worker may not have been dumpable", err)
	}
	// The container's whole filesystem (the binary and the libraries it ran
	// with, wherever the image keeps them) as gdb's sysroot: harp's images
	// are 20 to 130 MB.
	if err := copyOut(ctx, be.docker, id, "/", dir); err != nil {
		return "", fmt.Sprintf("copying the container's files out: %v", err)
	}
	// No script from the image runs in this machine's gdb: auto-loading is
	// off; libthread_db comes from this machine's own libraries.
	out, err := child.Output(ctx, 2*time.Minute, gdb, "-batch", "-nx", "-iex", "set auto-load off",
		"-ex", "set debuginfod enabled off", "-ex", "set sysroot "+dir, "-ex", "set libthread-db-search-path /lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu",
		"-ex", "file "+filepath.Join(dir, images.Binary), "-ex", "core-file "+filepath.Join(dir, "core"),
		"-ex", "info threads", "-ex", "thread apply all bt full")
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
		}
	}
}

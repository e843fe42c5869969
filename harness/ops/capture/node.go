// Package capture records real runtime output of HAProxy builds for the
// parser and doctor tests (fixtures/captures/<version>/), as `harp capture`
// runs it.
package capture

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/moby/moby/client"

	"github.com/harp-project/harp/harness/core/cliout"
	"github.com/harp-project/harp/harness/core/config"
	"github.com/harp-project/harp/harness/core/progress"
	"github.com/harp-project/harp/harness/live/node"
	"github.com/harp-project/harp/images"
)

// TwoSections is the setup of #3517's report (upstream's config): two
// peers sections, each with only the local peer and one table, whose
// `show peers` after a reload the parser tests read.
func TwoSections() (string, error) {
	return config.RenderText("capture-two-sections", `{{template "global" .}}

peers first
    peer harp 127.0.0.1:10000
    table marker type ip size 100 expire 1h store gpc0

peers second
    peer harp 127.0.0.1:10001
    table marker type ip size 100 expire 1h store gpc0
`, map[string]any{"Threads": 1, "LocalPeer": "harp"})
}

// AfterReload records `show peers` of a config's peers sections in the new
// worker once every section's resync after a reload is finished (with
// #3517's config: what that suite judges), into dir/file.
func AfterReload(ctx context.Context, cli *client.Client, img *images.Image, runID, cfg string, sections []string, dir, file string) error {
	n, err := node.Start(ctx, cli, node.Options{Image: img, Config: cfg, RunID: runID, Name: "capture-3517"})
	if err != nil {
		return err
	}
	defer n.Stop(context.WithoutCancel(ctx))
	// The raw answer is what gets recorded: the transcript keeps it.
	finished := func(pid int) (string, error) {
		mark := n.Mark()
		_, unmet, err := n.WaitResync(ctx, pid, 20*time.Second, sections...)
		if err == nil && unmet != "" {
			err = fmt.Errorf("%s", unmet)
		}
		ex := n.Transcript(mark)
		if err != nil || len(ex) == 0 {
			return "", err
		}
		return ex[len(ex)-1].Output, nil
	}
	pid, err := n.CurrentWorker(ctx)
	if err != nil {
		return err
	}
	if _, err := finished(pid); err != nil {
		return err
	}
	for _, section := range sections {
		if err := n.SetEntry(ctx, pid, section+"/marker", "192.0.2.1", "data.gpc0 1"); err != nil {
			return err
		}
	}
	r, err := n.Reload(ctx, 20*time.Second)
	if err != nil {
		return err
	}
	out, err := finished(r.NewPID)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, file), []byte(out), 0o644)
}

// Node records one build's answers to the commands harp parses, on a node
// of capture.cfg.tmpl, into dir: show info, show proc (with an old worker
// still alive), show peers, show table, show threads, show stat, and the
// master's log around a reload, a stalled thread and a worker crash.
func Node(ctx context.Context, cli *client.Client, img *images.Image, runID, dir string) error {
	cfg, err := config.Render("capture.cfg.tmpl", map[string]any{"Threads": 1, "LocalPeer": "harp"})
	if err != nil {
		return err
	}
	n, err := node.Start(ctx, cli, node.Options{Image: img, Config: cfg, RunID: runID, Name: "capture", Ports: []string{"8080/tcp"}})
	if err != nil {
		return err
	}
	defer n.Stop(context.WithoutCancel(ctx))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	files := map[string]string{"haproxy-vv.txt": img.VV, "haproxy.cfg": cfg}
	// Real traffic tracked by the table: one connection held through the
	// frontend (it reaches the stats socket), which also keeps the old
	// worker alive across the reload below.
	hold, err := n.Addr(ctx, "8080/tcp")
	if err != nil {
		return err
	}
	conn, err := net.DialTimeout("tcp", hold, 5*time.Second)
	if err != nil {
		return err
	}
	defer conn.Close()
	fmt.Fprintf(conn, "prompt\n")
	if err := answers(ctx, n, files); err != nil {
		return err
	}
	if err := reloadWithOldWorker(ctx, n, files); err != nil {
		return err
	}
	conn.Close()
	stallAndCrash(ctx, n)
	logs, err := n.Logs(ctx)
	if err != nil {
		return fmt.Errorf("master-log.txt: %w", err)
	}
	files["master-log.txt"] = logs
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// answers records the current worker's answers to the commands harp
// parses, after two entries were written in the tracked table.
func answers(ctx context.Context, n *node.Node, files map[string]string) error {
	pid, err := n.CurrentWorker(ctx)
	if err != nil {
		return err
	}
	for _, k := range []string{"192.0.2.1", "192.0.2.2"} {
		if err := n.SetEntry(ctx, pid, "cluster/counters", k, "data.gpc0 7"); err != nil {
			return err
		}
	}
	for name, cmd := range map[string]string{"show-info.txt": "show info", "show-peers.txt": "show peers", "show-table.txt": "show table cluster/counters",
		"show-table-list.txt": "show table", "show-threads.txt": "show threads", "show-stat.txt": "show stat",
		"show-pools.txt": "show pools", "show-activity.txt": "show activity"} {
		out, err := n.Worker(ctx, pid, cmd)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		files[name] = out
	}
	out, err := n.Master(ctx, "show proc")
	if err != nil {
		return fmt.Errorf("show-proc.txt: %w", err)
	}
	files["show-proc.txt"] = out
	// Read from this machine's /proc: a harp away from the Docker host
	// captures everything else.
	if st, err := n.MasterStatus(ctx); err == nil {
		files["master-status.txt"] = st.Raw
	} else {
		progress.Printf("master-status.txt not captured: %v", err)
	}
	return nil
}

// reloadWithOldWorker reloads while a held connection keeps the old worker
// alive, and records show proc listing it and the new worker's show peers.
func reloadWithOldWorker(ctx context.Context, n *node.Node, files map[string]string) error {
	if err := n.Signal(ctx, syscall.SIGUSR2); err != nil {
		return err
	}
	var withOld string
	err := node.Poll(ctx, 20*time.Second, 100*time.Millisecond, func() (bool, error) {
		out, err := n.Master(ctx, "show proc")
		withOld = out
		return err == nil && strings.Contains(out, "# old workers\n") && strings.Count(out, "worker") >= 2 && !strings.Contains(out, "# old workers\n# programs"), nil
	})
	if err != nil {
		return fmt.Errorf("old worker never listed: %w\n%s", err, withOld)
	}
	files["show-proc-old-worker.txt"] = withOld
	newPID, err := n.CurrentWorker(ctx)
	if err != nil {
		return err
	}
	out, err := n.Worker(ctx, newPID, "show peers")
	if err != nil {
		return fmt.Errorf("show-peers-after-reload.txt: %w", err)
	}
	files["show-peers-after-reload.txt"] = out
	return nil
}

// stallAndCrash makes the master log a stalled thread (3.1 and later warn
// after 100 ms; older builds say nothing) and a worker crash, both with
// expert-mode debug commands, once the old worker has left.
func stallAndCrash(ctx context.Context, n *node.Node) {
	_ = node.Poll(ctx, 20*time.Second, 100*time.Millisecond, func() (bool, error) {
		p, err := n.Procs(ctx)
		return err == nil && len(p.OldWorkers) == 0, nil
	})
	if _, err := n.Stats(ctx, "expert-mode on; debug dev loop 300"); err != nil {
		progress.Printf("debug dev loop: %v", err)
	}
	_ = node.Poll(ctx, 3*time.Second, 100*time.Millisecond, func() (bool, error) {
		logs, err := n.Logs(ctx)
		return len(cliout.ParseStalls(logs)) > 0, err
	})
	if _, err := n.Stats(ctx, "expert-mode on; debug dev panic"); err != nil {
		progress.Printf("debug dev panic: %v (expected: the worker dies)", err)
	}
	_ = node.Poll(ctx, 20*time.Second, 100*time.Millisecond, func() (bool, error) {
		exits, err := n.Exits(ctx)
		for _, e := range exits {
			if e.Code >= 128 {
				return true, nil
			}
		}
		return false, err
	})
}

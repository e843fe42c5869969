// Package suites holds one suite per upstream issue. Each file reads like the
// issue it encodes: setup, trigger, expectation.
package suites

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/harp-project/harp/harness/cliout"
	"github.com/harp-project/harp/harness/config"
	"github.com/harp-project/harp/harness/node"
	"github.com/harp-project/harp/harness/scenario"
	"github.com/harp-project/harp/harness/verdict"
)

// Issue3517: "Multiple peers sections lose stick tables on reload (shared
// dont_stop state)". The stopping process holds itself alive ("do not stop")
// until the new process has learnt its tables; with the latch shared by all
// peers sections, only one section teaches the new process.
var Issue3517 = scenario.Register(&scenario.Scenario{
	ID:       "3517",
	Upstream: "haproxy/haproxy#3517",
	Title:    "Multiple peers sections lose stick tables on reload (shared dont_stop state)",
	Owner:    "area:peers",
	Labels:   []string{"issue:3517", "area:peers"},
	Trials:   3,
	Noun:     "reloads",
	Steps: []string{
		"Setup: one node, nbthread 1, localpeer set; peers sections `first` and `second`, each holding only the local peer on its own loopback port and a table `marker` (type ip, size 100, expire 1h, store gpc0).",
		"Before each reload: wait until both sections report their initial resync finished (`show peers` flags 0x1|0x2), then `set table <section>/marker key 192.0.2.1 data.gpc0 1` in both and check both entries are there.",
		"Trigger: SIGUSR2 to the master; wait until `show proc` lists the new worker and the old one has left (or 20 s passed), and the new worker's sections report resync finished.",
		"Expectation: both tables still hold 192.0.2.1 with gpc0=1 in the new worker.",
	},
	Run: run3517,
})

const (
	markerKey     = "192.0.2.1"
	markerTable   = "marker"
	resyncTimeout = 20 * time.Second // 2.6 finishes its initial resync only after its 5 s timeout
	reloadTimeout = 20 * time.Second
)

var sections3517 = []struct {
	Name string
	Port int
}{{"first", 10001}, {"second", 10002}}

func run3517(ctx context.Context, env *scenario.Env) verdict.Outcome {
	cfg, err := config.Render("3517.cfg.tmpl", map[string]any{
		"Threads": 1, "LocalPeer": "harp", "Table": markerTable, "Sections": sections3517,
	})
	env.Config = cfg
	if err != nil {
		return verdict.Outcome{Err: err}
	}
	n, err := env.Start(ctx, node.Options{Image: env.Image, Config: cfg, RunID: env.RunID, Name: "node-3517"})
	if err != nil {
		return verdict.Outcome{Err: err}
	}
	defer n.Stop(context.WithoutCancel(ctx))

	var out verdict.Outcome
	if unmet := checkThreads(ctx, n); unmet != "" {
		out.Unmet = unmet
		return out
	}
	for i := 1; i <= env.Trials; i++ {
		t, err := reloadRound(ctx, n, i)
		out.Trials = append(out.Trials, t)
		if err != nil {
			out.Err = fmt.Errorf("reload %d: %w", i, err)
			return out
		}
		env.Logf("#3517 on %s: reload %d of %d: %s", env.Image.Name, i, env.Trials, trialSummary(t))
		if t.Unmet != "" && strings.HasPrefix(t.Unmet, "current worker") {
			break // the node is gone: later rounds would say nothing new
		}
	}
	return out
}

// checkThreads verifies the node runs the one thread the issue's setup asks for.
func checkThreads(ctx context.Context, n *node.Node) string {
	pid, err := n.CurrentWorker(ctx)
	if err != nil {
		return err.Error()
	}
	raw, err := n.Worker(ctx, pid, "show info")
	if err != nil {
		return "show info: " + err.Error()
	}
	info, err := cliout.ParseInfo(raw)
	if err != nil {
		return err.Error()
	}
	if info.Int("Nbthread") != 1 {
		return fmt.Sprintf("the setup needs nbthread 1, the worker runs %s threads", info["Nbthread"])
	}
	return ""
}

func reloadRound(ctx context.Context, n *node.Node, round int) (t verdict.Trial, err error) {
	t.N = round
	t.Evidence = map[string]any{}
	mark, t0 := n.Mark(), time.Now()
	defer func() {
		t.Duration = time.Since(t0)
		t.Exchanges = n.Transcript(mark)
	}()

	old, err := n.CurrentWorker(ctx)
	if err != nil {
		return t, err
	}
	// Precondition: the initial resync of both sections is finished, else
	// the old process would have nothing to teach and the round means nothing.
	if secs, unmet := waitResync(ctx, n, old); unmet != "" {
		t.Unmet = "before reload: " + unmet
		t.Evidence["peers_before"] = secs
		return t, nil
	}
	// Setup: the marker in both tables, checked.
	for _, s := range sections3517 {
		table := s.Name + "/" + markerTable
		out, err := n.Worker(ctx, old, fmt.Sprintf("set table %s key %s data.gpc0 1", table, markerKey))
		if err != nil {
			return t, err
		}
		if strings.TrimSpace(out) != "" {
			t.Unmet = fmt.Sprintf("set table %s refused: %s", table, strings.TrimSpace(out))
			return t, nil
		}
		if lost := checkMarker(ctx, n, old, table, nil); lost != "" {
			t.Unmet = "before reload: " + lost
			return t, nil
		}
	}

	// Trigger: SIGUSR2 to the master.
	r, err := n.Reload(ctx, reloadTimeout)
	t.Evidence["reload"] = r
	if err != nil {
		t.Unmet = "reload: " + err.Error()
		return t, nil
	}
	t.Notes = append(t.Notes, fmt.Sprintf("new worker %d listed %s after SIGUSR2", r.NewPID, r.NewUp.Round(time.Millisecond)))
	if r.OldExited {
		t.Notes = append(t.Notes, fmt.Sprintf("old worker %d gone %s after SIGUSR2", r.OldPID, r.OldGone.Round(time.Millisecond)))
	} else {
		t.Notes = append(t.Notes, fmt.Sprintf("old worker %d still listed %s after SIGUSR2", r.OldPID, reloadTimeout))
	}
	// The new worker has learnt what it will learn once its resync is
	// finished in both sections (taught by the old process, or timed out).
	secs, unmet := waitResync(ctx, n, r.NewPID)
	t.Evidence["peers_after"] = secs
	for _, s := range secs {
		if p, ok := s.Local(); ok {
			t.Notes = append(t.Notes, fmt.Sprintf("%s: flags=0x%x, local peer last_status=%s last_hdshk=%s", s.Name, s.Flags, p.LastStatus, p.LastHdshk))
		}
	}
	if unmet != "" {
		t.Unmet = "after reload: " + unmet
		return t, nil
	}
	oldCrash, died := exitsOf(ctx, n, r.OldPID)
	if died != "" {
		t.Unmet = died
		return t, nil
	}

	// Expectation: both tables still hold the marker with gpc0=1.
	var lost, wrong []string
	tables := map[string]cliout.Table{}
	for _, s := range sections3517 {
		table := s.Name + "/" + markerTable
		switch msg := checkMarker(ctx, n, r.NewPID, table, tables); {
		case msg == "":
		case strings.HasSuffix(msg, " lost"):
			lost = append(lost, table)
		default:
			wrong = append(wrong, msg)
		}
	}
	t.Evidence["tables_after"] = tables
	if len(lost) > 0 {
		t.Violation = strings.Join(lost, " and ") + " lost"
	}
	if len(wrong) > 0 {
		t.Violation = strings.TrimPrefix(t.Violation+"; "+strings.Join(wrong, "; "), "; ")
	}
	if oldCrash != "" {
		t.Notes = append(t.Notes, oldCrash)
		if t.Violation != "" {
			// A crash while teaching also loses tables: this round cannot
			// tell the issue from the crash.
			t.Unmet = fmt.Sprintf("%s, and %s: the loss may come from the crash", oldCrash, t.Violation)
			t.Violation = ""
		} else {
			t.Remark = "old worker crashed after teaching its tables"
		}
	}
	return t, nil
}

// waitResync polls `show peers` on a worker until both sections report
// their initial resync finished.
func waitResync(ctx context.Context, n *node.Node, pid int) ([]cliout.PeersSection, string) {
	var secs []cliout.PeersSection
	pending := ""
	err := node.Poll(ctx, resyncTimeout, 100*time.Millisecond, func() (bool, error) {
		raw, err := n.Worker(ctx, pid, "show peers")
		if err != nil {
			return false, err
		}
		if secs, err = cliout.ParsePeers(raw); err != nil {
			return false, err
		}
		pending = ""
		for _, want := range sections3517 {
			s, ok := cliout.FindSection(secs, want.Name)
			if !ok {
				return false, fmt.Errorf("show peers lists no section %q", want.Name)
			}
			if !s.ResyncFinished() {
				pending = fmt.Sprintf("initial resync of section %s never finished (flags=0x%x after %s)", s.Name, s.Flags, resyncTimeout)
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil && pending != "" {
		return secs, pending
	}
	if err != nil {
		return secs, err.Error()
	}
	return secs, ""
}

// checkMarker says what is wrong with the marker in a table ("" if it is
// there with gpc0=1), and keeps the parsed table in seen.
func checkMarker(ctx context.Context, n *node.Node, pid int, table string, seen map[string]cliout.Table) string {
	raw, err := n.Worker(ctx, pid, "show table "+table)
	if err != nil {
		return fmt.Sprintf("show table %s: %v", table, err)
	}
	tb, err := cliout.ParseTable(raw)
	if err != nil {
		return err.Error()
	}
	if seen != nil {
		seen[table] = tb
	}
	e, ok := tb.Lookup(markerKey)
	if !ok {
		return table + " lost"
	}
	if e.Data["gpc0"] != "1" {
		return fmt.Sprintf("%s gpc0=%s (want 1)", table, e.Data["gpc0"])
	}
	return ""
}

// exitsOf reads the master's log for this round: whether the old worker
// died on a signal during its soft-stop, and whether a current worker died.
func exitsOf(ctx context.Context, n *node.Node, oldPID int) (oldCrash, died string) {
	exits, err := n.Exits(ctx)
	if err != nil {
		return "", "reading the master's log: " + err.Error()
	}
	for _, e := range exits {
		switch {
		case e.Current:
			died = fmt.Sprintf("current worker %d exited with code %d (%s)", e.PID, e.Code, e.Reason)
		case e.PID == oldPID && e.Code >= 128:
			oldCrash = fmt.Sprintf("old worker %d exited with code %d (%s) during soft-stop", e.PID, e.Code, e.Reason)
		}
	}
	return oldCrash, died
}

func trialSummary(t verdict.Trial) string {
	switch {
	case t.Violation != "":
		return "violated: " + t.Violation
	case t.Unmet != "":
		return "inconclusive: " + t.Unmet
	}
	return "held"
}

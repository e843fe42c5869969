// Package suites holds one suite per upstream issue. Each file reads like the
// issue it encodes: setup, trigger, expectation.
package suites

import (
	"context"
	"errors"
	"fmt"
	"sort"
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

// Config3517 renders the suite's config (also used by `harp capture`).
func Config3517() (string, error) {
	return config.Render("3517.cfg.tmpl", map[string]any{
		"Threads": 1, "LocalPeer": "harp", "Table": markerTable, "Sections": sections3517,
	})
}

func run3517(ctx context.Context, env *scenario.Env) verdict.Outcome {
	cfg, err := Config3517()
	n, out, ok := startSingle(ctx, env, node.Options{Config: cfg, Name: "node-3517"}, err, 1)
	if !ok {
		return out
	}
	defer n.Stop(context.WithoutCancel(ctx))
	for i := 1; i <= env.Trials; i++ {
		t, err := reloadRound(ctx, n, i)
		out.Trials = append(out.Trials, t)
		if err != nil {
			out.Err = fmt.Errorf("reload %d: %w", i, err)
			return out
		}
		env.Logf("#3517 on %s: reload %d of %d: %s", env.Image.Name, i, env.Trials, trialSummary(t))
		if running, _, err := n.Running(ctx); err == nil && !running {
			break // the master is gone: later rounds would say nothing new
		}
	}
	return out
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
		if m := readMarker(ctx, n, old, table); !m.ok() {
			t.Unmet = fmt.Sprintf("before reload: %s: %s", table, m)
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

	// Expectation: both tables still hold the marker with gpc0=1.
	f := roundFacts{OldPID: r.OldPID, OldExited: r.OldExited, Markers: map[string]marker{}}
	for _, s := range sections3517 {
		table := s.Name + "/" + markerTable
		f.Markers[table] = readMarker(ctx, n, r.NewPID, table)
	}
	t.Evidence["markers_after"] = f.Markers
	// Exits are read after the tables, so a crash during the checks is seen.
	f.OldCrash, f.Died = exitsOf(ctx, n, r.OldPID)
	if f.OldCrash != "" {
		t.Notes = append(t.Notes, f.OldCrash)
	}
	t.Violation, t.Unmet, t.Remark = judge(f)
	return t, nil
}

// marker is what `show table` said of the marker in one table.
type marker struct {
	Present bool   `json:"present"`
	GPC0    string `json:"gpc0,omitempty"`
	Err     string `json:"error,omitempty"` // the table could not be read
}

func (m marker) ok() bool { return m.Err == "" && m.Present && m.GPC0 == "1" }

func (m marker) String() string {
	switch {
	case m.Err != "":
		return m.Err
	case !m.Present:
		return "marker absent"
	}
	return "gpc0=" + m.GPC0
}

// roundFacts is what one round observed after the reload.
type roundFacts struct {
	OldPID    int
	OldExited bool
	OldCrash  string // the old worker died on a signal
	Died      string // the current worker died
	Markers   map[string]marker
}

// judge decides one round from its facts: a violation of the expectation,
// an unmet precondition, or a remark that does not change the verdict.
func judge(f roundFacts) (violation, unmet, remark string) {
	var tables []string
	for t := range f.Markers {
		tables = append(tables, t)
	}
	sort.Strings(tables)
	var lost, wrong []string
	for _, t := range tables {
		m := f.Markers[t]
		switch {
		case m.Err != "":
			return "", fmt.Sprintf("after reload: %s could not be read: %s", t, m.Err), ""
		case !m.Present:
			lost = append(lost, t)
		case m.GPC0 != "1":
			wrong = append(wrong, fmt.Sprintf("%s gpc0=%s (want 1)", t, m.GPC0))
		}
	}
	switch {
	case f.Died != "":
		return "", f.Died, ""
	case !f.OldExited:
		return "", fmt.Sprintf("old worker %d still running %s after SIGUSR2: how it ended cannot be judged", f.OldPID, reloadTimeout), ""
	case len(tables) > 0 && len(lost) == len(tables):
		// #3517 is one section taught and another not; losing every table
		// means no teaching happened at all, which has other causes.
		return "", "every marker lost: the old process taught no section, which is not this issue's signature", ""
	}
	if len(lost) > 0 {
		violation = strings.Join(lost, " and ") + " lost"
	}
	if len(wrong) > 0 {
		violation = strings.TrimPrefix(violation+"; "+strings.Join(wrong, "; "), "; ")
	}
	if f.OldCrash != "" {
		if violation != "" {
			// A crash while teaching loses tables too: this round cannot
			// tell the issue from the crash.
			return "", fmt.Sprintf("%s, and %s: the loss may come from the crash", f.OldCrash, violation), ""
		}
		remark = "old worker crashed after teaching its tables"
	}
	return violation, "", remark
}

// waitResync polls `show peers` on a worker until both sections report
// their initial resync finished. CLI errors are retried until the deadline.
func waitResync(ctx context.Context, n *node.Node, pid int) ([]cliout.PeersSection, string) {
	var secs []cliout.PeersSection
	pending, lastErr := "", ""
	err := node.Poll(ctx, resyncTimeout, 100*time.Millisecond, func() (bool, error) {
		raw, err := n.Worker(ctx, pid, "show peers")
		if err == nil {
			secs, err = cliout.ParsePeers(raw)
		}
		if err != nil {
			lastErr = err.Error()
			return false, nil
		}
		pending, lastErr = "", ""
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
	switch {
	case err == nil:
		return secs, ""
	case errors.Is(err, node.ErrDeadline) && lastErr != "":
		return secs, fmt.Sprintf("show peers on worker %d kept failing for %s: %s", pid, resyncTimeout, lastErr)
	case errors.Is(err, node.ErrDeadline) && pending != "":
		return secs, pending
	}
	return secs, err.Error()
}

// readMarker reads the marker entry of one table on one worker.
func readMarker(ctx context.Context, n *node.Node, pid int, table string) marker {
	raw, err := n.Worker(ctx, pid, "show table "+table)
	if err != nil {
		return marker{Err: fmt.Sprintf("show table %s: %v", table, err)}
	}
	tb, err := cliout.ParseTable(raw)
	if err != nil {
		return marker{Err: err.Error()}
	}
	e, ok := tb.Lookup(markerKey)
	if !ok {
		return marker{}
	}
	return marker{Present: true, GPC0: e.Data["gpc0"]}
}

// exitsOf reads the master's log: whether the old worker died on a signal
// during its soft-stop, and whether a current worker died.
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

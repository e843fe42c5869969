// Package issue3517 encodes haproxy/haproxy#3517: "Multiple peers sections
// lose stick tables on reload (shared dont_stop state)". The stopping
// process holds itself alive ("do not stop") until the new process has
// learnt its tables; with the latch shared by all peers sections, only one
// section teaches the new process.
package issue3517

import (
	"context"
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

var Suite = scenario.Register(&scenario.Scenario{
	ID:       "3517",
	Upstream: "haproxy/haproxy#3517",
	Title:    "Multiple peers sections lose stick tables on reload (shared dont_stop state)",
	Summary:  "two peers sections, a marker in each table, 3 SIGUSR2 reloads: both markers must survive",
	Labels:   []string{"area:peers"},
	Trials:   3,
	Noun:     "reloads",
	Steps: []string{
		"Setup: one node, nbthread 1, localpeer set; peers sections `first` and `second`, each holding only the local peer on its own loopback port and a table `marker` (type ip, size 100, expire 1h, store gpc0).",
		"Before each reload: wait until both sections report their initial resync finished (`show peers` flags 0x1|0x2), then `set table <section>/marker key 192.0.2.1 data.gpc0 1` in both and check both entries are there.",
		"Trigger: SIGUSR2 to the master; wait until `show proc` lists the new worker and the old one has left (or 20 s passed), and the new worker's sections report resync finished.",
		"Expectation: both tables still hold 192.0.2.1 with gpc0=1 in the new worker.",
	},
	Run: run,
})

const (
	key           = "192.0.2.1"
	resyncTimeout = 20 * time.Second // 2.6 finishes its initial resync only after its 5 s timeout
	reloadTimeout = 20 * time.Second
)

// Tables are the marker tables, one per peers section.
var Tables = []string{"first/marker", "second/marker"}

// Config renders the suite's configuration (also recorded by `harp capture`).
func Config() (string, error) {
	return config.RenderText("3517", `{{template "global" .}}
{{range $i, $s := .Sections}}
peers {{$s}}
    peer harp 127.0.0.1:1000{{$i}}
    table marker type ip size 100 expire 1h store gpc0
{{end}}`, map[string]any{"Threads": 1, "LocalPeer": "harp", "Sections": []string{"first", "second"}})
}

// Evidence is what one round recorded, for the report and the self-tests.
type Evidence struct {
	Reload      node.Reload           `json:"reload"`
	PeersBefore []cliout.PeersSection `json:"peers_before,omitempty"`
	PeersAfter  []cliout.PeersSection `json:"peers_after,omitempty"`
	Markers     map[string]Marker     `json:"markers_after,omitempty"`
}

func run(ctx context.Context, env *scenario.Env) verdict.Outcome {
	cfg, err := Config()
	if err != nil {
		return verdict.Outcome{Err: err}
	}
	n, unmet, err := env.StartNode(ctx, node.Options{Config: cfg}, 1)
	if n == nil {
		return verdict.Outcome{Unmet: unmet, Err: err}
	}
	return env.RunTrials(ctx, func(ctx context.Context, t *scenario.Trial) error { return round(ctx, n, t) })
}

func round(ctx context.Context, n *node.Node, t *scenario.Trial) error {
	ev := &Evidence{}
	t.Evidence = ev
	old, err := n.CurrentWorker(ctx)
	if err != nil {
		return err
	}
	// Precondition: both sections finished their initial resync, else the
	// old process would have nothing to teach and the round means nothing.
	var unmet string
	if ev.PeersBefore, unmet, err = n.WaitResync(ctx, old, resyncTimeout, "first", "second"); err != nil || unmet != "" {
		t.Unmet = "before reload: " + unmet
		return err
	}
	for _, tb := range Tables { // setup: the marker in both tables, checked
		if err := n.SetEntry(ctx, old, tb, key, "data.gpc0 1"); node.IsRefused(err) {
			t.Unmet = err.Error()
			return nil
		} else if err != nil {
			return err
		}
		if m := ReadMarker(ctx, n, old, tb); !m.ok() {
			t.Unmet = fmt.Sprintf("before reload: %s: %s", tb, m)
			return nil
		}
	}
	ev.Reload, err = n.Reload(ctx, reloadTimeout) // trigger
	if err != nil {
		t.Unmet = "reload: " + err.Error()
		return nil
	}
	r := ev.Reload
	t.Notef("new worker %d listed %s after SIGUSR2", r.NewPID, r.NewUp.Round(time.Millisecond))
	if r.OldExited {
		t.Notef("old worker %d gone %s after SIGUSR2", r.OldPID, r.OldGone.Round(time.Millisecond))
	} else {
		t.Notef("old worker %d still listed %s after SIGUSR2", r.OldPID, reloadTimeout)
	}
	// The new worker has learnt what it will once both resyncs are over.
	if ev.PeersAfter, unmet, err = n.WaitResync(ctx, r.NewPID, resyncTimeout, "first", "second"); err != nil || unmet != "" {
		t.Unmet = "after reload: " + unmet
		return err
	}
	for _, s := range ev.PeersAfter {
		if p, ok := s.Local(); ok {
			t.Notef("%s: flags=0x%x, local peer last_status=%s last_hdshk=%s", s.Name, s.Flags, p.LastStatus, p.LastHdshk)
		}
	}
	f := Facts{OldPID: r.OldPID, OldExited: r.OldExited, Markers: map[string]Marker{}}
	for _, tb := range Tables {
		f.Markers[tb] = ReadMarker(ctx, n, r.NewPID, tb)
	}
	ev.Markers = f.Markers
	f.OldCrash, f.Died = exitsOf(ctx, n, r.OldPID) // after the tables: a crash during the checks is seen
	if f.OldCrash != "" {
		t.Notef("%s", f.OldCrash)
	}
	t.Violation, t.Unmet, t.Remark = Judge(f)
	if running, _, err := n.Running(ctx); err == nil && !running {
		return scenario.Stop // the master is gone: later rounds would say nothing new
	}
	return nil
}

// Marker is what `show table` said of the marker in one table.
type Marker struct {
	Present bool   `json:"present"`
	GPC0    string `json:"gpc0,omitempty"`
	Err     string `json:"error,omitempty"` // the table could not be read
}

func (m Marker) ok() bool { return m.Err == "" && m.Present && m.GPC0 == "1" }

func (m Marker) String() string {
	switch {
	case m.Err != "":
		return m.Err
	case !m.Present:
		return "marker absent"
	}
	return "gpc0=" + m.GPC0
}

// ReadMarker reads the marker entry of one table on one worker.
func ReadMarker(ctx context.Context, n *node.Node, pid int, table string) Marker {
	tb, err := n.Table(ctx, pid, table)
	if err != nil {
		return Marker{Err: err.Error()}
	}
	if e, ok := tb.Lookup(key); ok {
		return Marker{Present: true, GPC0: e.Data["gpc0"]}
	}
	return Marker{}
}

// Facts are what one round observed after the reload.
type Facts struct {
	OldPID    int
	OldExited bool
	OldCrash  string // the old worker died on a signal
	Died      string // the current worker died
	Markers   map[string]Marker
}

// Judge decides one round from its facts: a violation of the expectation,
// an unmet precondition, or a remark that does not change the verdict.
func Judge(f Facts) (violation, unmet, remark string) {
	var tables, lost, wrong []string
	for t := range f.Markers {
		tables = append(tables, t)
	}
	sort.Strings(tables)
	for _, t := range tables {
		switch m := f.Markers[t]; {
		case m.Err != "":
			return "", fmt.Sprintf("after reload: %s could not be read: %s", t, m.Err), ""
		case !m.Present:
			lost = append(lost, t)
		case m.GPC0 != "1":
			wrong = append(wrong, fmt.Sprintf("%s gpc0=%s (want 1)", t, m.GPC0))
		}
	}
	switch {
	case len(tables) < len(Tables):
		return "", fmt.Sprintf("after reload: only %d of %d marker tables were read", len(tables), len(Tables)), ""
	case f.Died != "":
		return "", f.Died, ""
	case !f.OldExited:
		return "", fmt.Sprintf("old worker %d still running %s after SIGUSR2: how it ended cannot be judged", f.OldPID, reloadTimeout), ""
	case len(lost) == len(tables):
		// #3517 is one section taught and another not; losing every table
		// means no teaching happened at all, which has other causes.
		return "", "every marker lost: the old process taught no section, which is not this issue's signature", ""
	}
	violation = strings.Join(append(joinLost(lost), wrong...), "; ")
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

func joinLost(lost []string) []string {
	if len(lost) == 0 {
		return nil
	}
	return []string{strings.Join(lost, " and ") + " lost"}
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

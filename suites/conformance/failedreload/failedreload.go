// Package failedreload: a reload with a config that cannot load changes
// nothing (the old worker keeps serving with its tables, the master says
// the reload failed and keeps taking signals), and the next reload with a
// good config works, by SIGUSR2 and by the master CLI.
package failedreload

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"time"

	"github.com/harp-project/harp/harness/cliout"
	"github.com/harp-project/harp/harness/config"
	"github.com/harp-project/harp/harness/load"
	"github.com/harp-project/harp/harness/node"
	"github.com/harp-project/harp/harness/scenario"
	"github.com/harp-project/harp/harness/text"
	"github.com/harp-project/harp/harness/verdict"
)

var Suite = scenario.Register(&scenario.Scenario{
	ID:       "conf-failed-reload",
	Upstream: "conformance: master-worker reloads that fail",
	Title:    "A reload with a config that cannot load changes nothing, and the next reload works",
	Summary:  "6 failure/recovery cycles on one node (a missing map file, a syntax error, an unknown keyword; recovery by SIGUSR2 and by the master CLI): the old worker keeps serving with its table, show proc counts the failure, the master keeps taking signals, the next good reload starts a new worker",
	Labels:   []string{"area:conformance", "area:mworker"},
	Trials:   len(Breaks) * 2,
	Noun:     "cycles",
	Params:   []scenario.Param{scenario.Duration("BOUND", 20*time.Second, "how long show proc may take to count a failed reload, and a good reload to start a new worker (observed: under 200 ms)")},
	Steps: []string{
		"Setup: one node, nbthread 2; an HTTP frontend on 8080 answering 200 and tracking its x-key header in backend `tbl`'s stick table (type string len 32, expire 1h, store gpc0).",
		"Before each cycle: the current worker answers HTTP 200; `set table tbl key keep-N data.gpc0 N` on it; the master's `show proc` failed-reload counter is read.",
		"Trigger: the config is replaced by one that cannot load (checked first: the build's `haproxy -c` must refuse it) (cycle 1 and 4: a map file that does not exist; 2 and 5: an unterminated quote; 3 and 6: an unknown keyword), then SIGUSR2 to the master.",
		"Expectation, once `show proc` counts one more failed reload (within BOUND, 20 s): the same worker is still the current one and answers HTTP 200, its table still holds keep-N with gpc0 N, and the master does not block or leave pending SIGUSR2 (/proc/<master>/status SigBlk, SigPnd, ShdPnd, recorded).",
		"Recovery: the good config is written back and the node reloaded, by SIGUSR2 in cycles 1-3 and by the master CLI `reload` in cycles 4-6: a new worker must be listed within BOUND, and answer HTTP 200.",
	},
	Run: run,
})

// Break is one way a config cannot load: a line added to the frontend.
type Break struct {
	Name string
	Line string
}

// Breaks in cycle order.
var Breaks = []Break{
	{"a missing map file", "http-request set-header x-m %[req.hdr(host),map(/etc/harp/absent.map)]"},
	{"a syntax error", `http-request set-header x-a "unterminated`},
	{"an unknown keyword", "frobnicate yes"},
}

// Config renders the good config, or a broken one with line added to the
// frontend.
func Config(line string) (string, error) {
	return config.RenderText("conf-failed-reload", `{{template "global" .}}

frontend web
    mode http
    timeout client 10s
    bind 0.0.0.0:8080
    http-request track-sc0 req.hdr(x-key) table tbl
{{- with .Line}}
    {{.}}
{{- end}}
    http-request return status 200 content-type text/plain string ok

backend tbl
    stick-table type string len 32 size 1k expire 1h store gpc0
`, map[string]any{"Threads": 2, "LocalPeer": "", "Line": line})
}

// Evidence is what one cycle recorded.
type Evidence struct {
	Facts  Facts             `json:"facts"`
	Status cliout.ProcStatus `json:"master_status_after_failure"`
	Reload node.Reload       `json:"recovery"`
	Broken string            `json:"broken_config"`
}

func run(ctx context.Context, env *scenario.Env) verdict.Outcome {
	good, err := Config("")
	if err != nil {
		return verdict.Outcome{Err: err}
	}
	n, unmet, err := env.StartNode(ctx, node.Options{Config: good, Ports: []string{"8080/tcp"}}, 2)
	if n == nil {
		return verdict.Outcome{Unmet: unmet, Err: err}
	}
	web, err := n.Addr(ctx, "8080/tcp")
	if err != nil {
		return verdict.Outcome{Err: err}
	}
	return env.RunTrials(ctx, func(ctx context.Context, t *scenario.Trial) error {
		b := Breaks[(t.N-1)%len(Breaks)]
		how := node.BySignal
		if (t.N-1)/len(Breaks)%2 == 1 {
			how = node.ByMasterCLI
		}
		ev := &Evidence{}
		t.Evidence = ev
		ev.Facts = Facts{Break: b.Name, Recovery: string(how)}
		err := cycle(ctx, n, web, t, b, how, good, ev, env.Params.Duration("BOUND"))
		t.Violation, t.Unmet = Judge(ev.Facts)
		if running, _, rerr := n.Running(ctx); err == nil && rerr == nil && !running {
			return scenario.Stop // the master is gone: later cycles say nothing new
		}
		return err
	})
}

func cycle(ctx context.Context, n *node.Node, web string, t *scenario.Trial, b Break, how node.How, good string, ev *Evidence, bound time.Duration) error {
	f := &ev.Facts
	f.Bound = bound
	old, err := n.CurrentWorker(ctx)
	if err != nil {
		f.Setup = "before the cycle: " + err.Error()
		return nil
	}
	if code := load.Get(ctx, web); code != 200 {
		f.Setup = fmt.Sprintf("before the cycle the worker answered HTTP %s", codeText(code))
		return nil
	}
	key, val := fmt.Sprintf("keep-%d", t.N), fmt.Sprint(t.N)
	if err := n.SetEntry(ctx, old, "tbl", key, "data.gpc0 "+val); err != nil {
		f.Setup = "before the cycle: " + err.Error()
		return nil
	}
	procs, err := n.Procs(ctx)
	if err != nil {
		return err
	}
	f.FailedBefore = procs.Master.Failed
	broken, err := Config(b.Line)
	if err != nil {
		return err
	}
	ev.Broken = broken
	// Precondition: this build refuses the broken config (haproxy -c), so
	// a new worker after it would be HAProxy's doing, not a break that
	// does not break.
	const brokenPath = "/etc/harp/broken.cfg"
	if err := n.WriteFile(ctx, brokenPath, []byte(broken)); err != nil {
		return err
	}
	ok, out, err := n.CheckConfig(ctx, brokenPath)
	if err != nil {
		return err
	}
	if ok {
		f.Setup = fmt.Sprintf("haproxy -c accepts the config with %s on this build: it is no break here", b.Name)
		return nil
	}
	t.Notef("haproxy -c refuses the broken config: %s", firstLine(out))
	if err := n.WriteFile(ctx, node.ConfigPath, []byte(broken)); err != nil {
		return err
	}
	if err := n.Signal(ctx, syscall.SIGUSR2); err != nil {
		return fmt.Errorf("sending SIGUSR2: %w", err)
	}
	// The failure is observed, not waited out: show proc counts it.
	var after cliout.Procs
	f.Reported = node.Poll(ctx, bound, 50*time.Millisecond, func() (bool, error) {
		p, err := n.Procs(ctx)
		if err != nil {
			return false, nil
		}
		after = p
		return p.Master.Failed > f.FailedBefore, nil
	}) == nil
	f.FailedAfter = after.Master.Failed
	if running, code, err := n.Running(ctx); err == nil && !running {
		f.MasterExited = fmt.Sprintf("the master exited with code %d after the failed reload", code)
		return nil
	}
	f.OldPID = old
	_, f.OldListed = after.Find(old)
	if cur, ok := after.Current(); ok && cur.PID != old {
		f.NewWorker = cur.PID
	}
	if _, current := after.Current(); !current && f.OldListed {
		t.Notef("show proc lists the worker that keeps serving, %d, among the old workers (as 3.1 and later do after a failed reload)", old)
	}
	f.HTTPAfter = load.Get(ctx, web)
	if tb, err := n.Table(ctx, old, "tbl"); err == nil {
		if e, ok := tb.Lookup(key); ok {
			f.EntryAfter = e.Data["gpc0"]
		} else {
			f.EntryAfter = "absent"
		}
	} else {
		f.EntryAfter = "unreadable: " + err.Error()
	}
	f.EntryWant = val
	if st, err := n.MasterStatus(ctx); err == nil {
		ev.Status = st
		f.Blocked, f.Pending = cliout.Has(st.SigBlk, syscall.SIGUSR2), cliout.Has(st.SigPnd|st.ShdPnd, syscall.SIGUSR2)
		t.Notef("master after the failed reload: %s, blocked %s, pending %s", st.State, cliout.Signals(st.SigBlk), cliout.Signals(st.SigPnd|st.ShdPnd))
	} else {
		f.StatusErr = err.Error()
		t.Notef("master status not read: %v", err)
	}
	t.Notef("%s: show proc failed %d -> %d, worker %d listed: %v, new worker: %d, HTTP %s, %s gpc0=%s", b.Name, f.FailedBefore, f.FailedAfter, old, f.OldListed, f.NewWorker, codeText(f.HTTPAfter), key, f.EntryAfter)
	if logs, err := n.Logs(ctx); err == nil {
		t.Show("master output after the failed reload (last lines)", text.LastLines(logs, 8))
	}
	// Recovery: the good config back, then the next reload.
	if err := n.WriteFile(ctx, node.ConfigPath, []byte(good)); err != nil {
		return err
	}
	r, err := n.ReloadBy(ctx, how, bound)
	ev.Reload = r
	if err != nil && (strings.HasPrefix(err.Error(), "before reload:") || strings.HasPrefix(err.Error(), "sending SIGUSR2:")) {
		f.HarnessErr = "the recovery reload could not be asked for: " + err.Error()
		return nil
	}
	if err != nil {
		f.Recovery = string(how)
		f.RecoveryErr = err.Error()
		if st, serr := n.MasterStatus(ctx); serr == nil {
			t.Notef("master after the recovery %s: %s, blocked %s, pending %s", how, st.State, cliout.Signals(st.SigBlk), cliout.Signals(st.SigPnd|st.ShdPnd))
		}
		return nil
	}
	f.Recovered = true
	f.HTTPRecovered = load.Get(ctx, web)
	t.Notef("recovery by %s: new worker %d listed %s after it, HTTP %s", how, r.NewPID, r.NewUp.Round(time.Millisecond), codeText(f.HTTPRecovered))
	return nil
}

// firstLine is the first line that says something (an [ALERT]).
func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, "ALERT") {
			return strings.TrimSpace(l)
		}
	}
	return strings.TrimSpace(strings.SplitN(s, "\n", 2)[0])
}

func codeText(code int) string {
	if code == 0 {
		return "no answer"
	}
	return fmt.Sprint(code)
}

// Facts are what one failure/recovery cycle observed.
type Facts struct {
	Break         string        `json:"break"`
	Recovery      string        `json:"recovery"`
	Bound         time.Duration `json:"bound_ns"`
	Setup         string        `json:"setup,omitempty"`
	FailedBefore  int           `json:"failed_before"`
	FailedAfter   int           `json:"failed_after"`
	Reported      bool          `json:"reported"` // show proc counted the failure within reportTimeout
	MasterExited  string        `json:"master_exited,omitempty"`
	OldPID        int           `json:"old_pid"`
	OldListed     bool          `json:"old_listed"` // still in show proc (current or old workers)
	NewWorker     int           `json:"new_worker,omitempty"`
	HTTPAfter     int           `json:"http_after"`
	EntryWant     string        `json:"entry_want"`
	EntryAfter    string        `json:"entry_after"`
	HarnessErr    string        `json:"harness_error,omitempty"` // harp could not ask for the recovery
	StatusErr     string        `json:"status_error,omitempty"`  // /proc/<master>/status could not be read
	Blocked       bool          `json:"usr2_blocked"`
	Pending       bool          `json:"usr2_pending"`
	Recovered     bool          `json:"recovered"`
	RecoveryErr   string        `json:"recovery_error,omitempty"`
	HTTPRecovered int           `json:"http_recovered"`
}

// Judge decides one cycle. Whatever the failed reload changed is a
// violation; so is a next reload the master does not take.
func Judge(f Facts) (violation, unmet string) {
	if f.Setup != "" {
		return "", f.Break + ": " + f.Setup
	}
	var v []string
	switch {
	case f.MasterExited != "":
		v = append(v, f.MasterExited)
	case !f.Reported:
		v = append(v, fmt.Sprintf("show proc never counted the failed reload within %s (failed: %d -> %d)", f.Bound, f.FailedBefore, f.FailedAfter))
	}
	if f.MasterExited == "" {
		if !f.OldListed {
			v = append(v, fmt.Sprintf("the old worker %d is gone after the failed reload", f.OldPID))
		}
		if f.NewWorker != 0 {
			v = append(v, fmt.Sprintf("a new worker %d started although the config could not load", f.NewWorker))
		}
		if f.HTTPAfter != 200 {
			v = append(v, fmt.Sprintf("the old worker answered HTTP %s after the failed reload", codeText(f.HTTPAfter)))
		}
		if f.EntryAfter != f.EntryWant && !(f.OldListed && strings.HasPrefix(f.EntryAfter, "unreadable")) {
			v = append(v, fmt.Sprintf("the old worker's table entry is %s after the failed reload, want gpc0=%s", f.EntryAfter, f.EntryWant))
		}
		switch {
		case f.Blocked:
			v = append(v, "the master blocks SIGUSR2 after the failed reload")
		case f.Pending:
			v = append(v, "SIGUSR2 is left pending on the master after the failed reload")
		}
		if !f.Recovered && f.HarnessErr == "" {
			v = append(v, fmt.Sprintf("the next reload (%s, good config) did not take: %s", f.Recovery, f.RecoveryErr))
		} else if f.HTTPRecovered != 200 {
			v = append(v, fmt.Sprintf("after the next reload the new worker answered HTTP %s", codeText(f.HTTPRecovered)))
		}
	}
	unread := ""
	if f.OldListed && strings.HasPrefix(f.EntryAfter, "unreadable") {
		unread = "the old worker's table " + f.EntryAfter
	}
	switch {
	case len(v) == 0 && f.HarnessErr != "":
		return "", f.Break + ": " + f.HarnessErr
	case len(v) == 0 && unread != "":
		return "", f.Break + ": " + unread
	case len(v) == 0 && f.StatusErr != "":
		return "", fmt.Sprintf("%s: the master's signal state could not be read: %s", f.Break, f.StatusErr)
	case len(v) == 0:
		return "", ""
	}
	return fmt.Sprintf("%s, recovery by %s: %s", f.Break, f.Recovery, strings.Join(v, "; ")), ""
}

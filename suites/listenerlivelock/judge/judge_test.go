package judge

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/harp-project/harp/harness/core/cliout"
)

// params are what the suite's ParamsOf reads from THREADS=2 and the given
// layout, groups and MAXCONN, with the defaults (the CPUs aside: the judge
// never reads them).
func params(layout string, groups, maxconn int) Params {
	return Params{Threads: 2, Groups: groups, Layout: layout, Variant: "frontend", Rate: 1000, Duration: 15 * time.Second,
		FrontendMaxconn: maxconn, Service: 100 * time.Millisecond, Timeout: 30 * time.Second, ControlMaxconn: 90000}
}

// The judge on facts: stall blocks captured from a real 3.4.7 watchdog
// (made by `debug dev loop`, a CLI loop: known not to be the listener
// path), and the same block with dequeue_proxy_listeners in its trace.
func TestJudge(t *testing.T) {
	raw, err := os.ReadFile("../../../fixtures/captures/3.4.7-1/master-log.txt")
	if err != nil {
		t.Fatal(err)
	}
	cli := cliout.ParseStalls(string(raw))
	onPath := cliout.ParseStalls(strings.Replace(string(raw), "debug_parse_cli_loop", "dequeue_proxy_listeners", 1))
	if len(cli) == 0 || len(onPath) == 0 {
		t.Fatal("the capture holds no stall")
	}
	p := params("groups", 2, 100)
	base := Facts{Params: p, WorkerLayout: WorkerLayout{Version: "3.4.7-1", Threads: 2, Groups: 2, Listeners: 2},
		Control: Round{Ran: true, Peaks: ConnPeaks{Frontend: 60, FrontendLimit: 800, Process: 60, ProcessLimit: 800}},
		Attack:  Round{Ran: true, Peaks: ConnPeaks{Frontend: 100, FrontendLimit: 100, Process: 100, ProcessLimit: 800}}}
	for _, c := range []struct {
		name                     string
		edit                     func(f *Facts)
		violation, unmet, remark string
	}{
		{"limit reached, no stall: held", func(f *Facts) {}, "", "", "limit reached, 0 stalls over 100 ms on the listener path"},
		{"a stall on the listener path", func(f *Facts) { f.Attack.Stalls = onPath }, "1 stalls over 100 ms", "", ""},
		{"a stall elsewhere does not count", func(f *Facts) { f.Attack.Stalls = cli }, "", "", "limit reached, 0 stalls over 100 ms on the listener path"},
		{"a build without lock history: every stall counts", func(f *Facts) {
			f.Attack.Stalls = []cliout.Stall{{Thread: 1, Ms: 300, Line: "WARNING! thread 1 has stopped processing traffic for 300 milliseconds"}}
		}, "1 stalls over 100 ms (longest 300 ms)", "", ""},
		{"a master exit", func(f *Facts) { f.Attack.MasterExited, f.Attack.MasterCode = true, 134 }, "master exited (134)", "", ""},
		{"a crash in the control is not the livelock's", func(f *Facts) { f.Control.Panics = []cliout.Panic{{Thread: 1}} }, "", "the control (same load, limit never reached) crashed too (1 panics)", ""},
		{"the limit never reached outweighs a stall", func(f *Facts) { f.Attack.Peaks.Frontend, f.Attack.Stalls = 60, onPath }, "", "never reached its maxconn (peak 60 of 100)", ""},
		{"the control stalled: the machine's, not HAProxy's", func(f *Facts) { f.Control.Stalls, f.Attack.Stalls = onPath, onPath }, "", "the control (same load, limit never reached) stalled too", ""},
		{"a control that reached its limit is no control", func(f *Facts) { f.Control.Peaks.Frontend = 800 }, "", "the control reached its limit", ""},
		{"3.0 cannot show stalls", func(f *Facts) { f.Version = "3.0.11" }, "", "emits no stall warnings", ""},
		{"a panic under the attack counts though the sampling never saw the limit", func(f *Facts) {
			f.Attack.Peaks.Frontend, f.Attack.Panics = 60, []cliout.Panic{{Thread: 1}}
		}, "1 panics", "", ""},
		{"connections that never drained: no attack", func(f *Facts) { f.Undrained = "the control's 40 connections never drained" }, "", "would not start from an idle process", ""},
		{"fewer listeners than the layout asks", func(f *Facts) { f.Listeners = 1 }, "", "the frontend has 1 listeners", ""},
		{"no attack is never a pass", func(f *Facts) { f.Attack.Ran = false }, "", "the attack never ran", ""},
	} {
		f := base
		c.edit(&f)
		v, u, r := Attack(f)
		if !contains(v, c.violation) || !contains(u, c.unmet) || !contains(r, c.remark) {
			t.Errorf("%s: got %q, %q, %q", c.name, v, u, r)
		}
	}
	binds := base
	binds.Params = params("binds", 1, 4000)
	binds.Groups, binds.Listeners, binds.Attack.Stalls = 1, 2, onPath
	if v, u, _ := Attack(binds); v != "" || !strings.Contains(u, "several thread groups") {
		t.Errorf("a layout that cannot show the bug: %q, %q", v, u)
	}
}

// contains: want "" means got must be empty too.
func contains(got, want string) bool {
	if want == "" {
		return got == ""
	}
	return strings.Contains(got, want)
}

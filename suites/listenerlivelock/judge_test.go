package listenerlivelock

import (
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/harp-project/harp/harness/cliout"
	"github.com/harp-project/harp/harness/scenario"
)

func params(t *testing.T, given map[string]string) Params {
	t.Helper()
	v, err := scenario.ValuesFor(Suite.Params, given)
	if err != nil {
		t.Fatal(err)
	}
	return ParamsOf(v)
}

func TestWarnsOnStalls(t *testing.T) {
	for v, want := range map[string]bool{"3.4.7-1": true, "3.1.0": true, "3.0.11-9e587df": false, "2.6.12-1+deb12u3": false} {
		if WarnsOnStalls(v) != want {
			t.Errorf("WarnsOnStalls(%q) = %v", v, !want)
		}
	}
}

// On a machine without CPUs to spare for the load generator, or with a
// layout that has no thread groups, no run can say REPRODUCED: whatever
// THREADS, RATE and LAYOUT are given on 2 CPUs, a precondition fails
// before any load.
func TestPreconditions(t *testing.T) {
	for _, given := range []map[string]string{
		{"THREADS": "1"}, {"THREADS": "2"}, {"THREADS": "2", "RATE": "50000"}, {"THREADS": "3"}, {"THREADS": "16"},
		{"THREADS": "2", "LAYOUT": "binds"}, {"THREADS": "2", "LAYOUT": "shards"}, {"THREADS": "2", "CPUSET": "0"},
	} {
		p := params(t, given)
		u := p.machineUnmet()
		if u == "" {
			u = p.layoutUnmet()
		}
		need := p.Threads + 1 // HAProxy's threads and one CPU for the load
		if runtime.NumCPU() < need && u == "" {
			t.Errorf("%v on %d CPUs: no precondition failed", given, runtime.NumCPU())
		}
		if (p.Layout != "groups" || p.Groups < 2) && p.layoutUnmet() == "" {
			t.Errorf("%v: a layout without several thread groups passed", given)
		}
	}
	if p := params(t, map[string]string{"THREADS": "2", "CPUSET": "0-1"}); runtime.NumCPU() <= 2 && !strings.Contains(p.machineUnmet(), "headroom") {
		t.Errorf("every CPU to HAProxy leaves none for the load: %q", p.machineUnmet())
	}
	if p := params(t, map[string]string{"THREADS": "2", "CPUSET": "500-501"}); !strings.Contains(p.machineUnmet(), "does not have") {
		t.Errorf("CPUs the machine lacks: %q", p.machineUnmet())
	}
}

func TestParams(t *testing.T) {
	if _, err := scenario.ValuesFor(Suite.Params, map[string]string{"LAYOUT": "rings"}); err == nil || !strings.Contains(err.Error(), "groups, shards, binds") {
		t.Errorf("a layout that does not exist: %v", err)
	}
	if _, err := scenario.ValuesFor(Suite.Params, map[string]string{"CPUSET": "3-1"}); err == nil {
		t.Error("a backwards cpuset was accepted")
	}
	if p := params(t, map[string]string{"THREADS": "4"}); p.Groups != 4 {
		t.Errorf("groups default to the threads with LAYOUT=groups: %d", p.Groups)
	}
	if p := params(t, map[string]string{"THREADS": "4", "LAYOUT": "binds"}); p.Groups != 1 {
		t.Errorf("groups default to 1 with LAYOUT=binds: %d", p.Groups)
	}
	// Steps in reports and `harp suites` carry no stale numbers.
	if p := params(t, nil); p.Threads != 16 || p.Rate != 1000 || p.FrontendMaxconn != 4000 {
		t.Errorf("defaults: %+v", p)
	}
}

func TestConfig(t *testing.T) {
	for _, c := range []struct {
		given map[string]string
		want  []string
	}{
		{map[string]string{"THREADS": "4", "LAYOUT": "groups"}, []string{"nbthread 4", "thread-groups 4", "bind :8080 thread 4/all", "maxconn 4000", "server backend backend:8080 maxconn 1"}},
		{map[string]string{"THREADS": "4", "LAYOUT": "shards"}, []string{"bind :8080 shards by-thread"}},
		{map[string]string{"THREADS": "3", "LAYOUT": "binds"}, []string{"bind :8080 thread 3\n"}},
		// The process's limit is set at run time (set maxconn global 2000)
		// below the one configured for the control.
		{map[string]string{"VARIANT": "process", "LAYOUT": "binds"}, []string{"    maxconn 90000\n", "    maxconn 4000\n"}},
	} {
		cfg, err := params(t, c.given).Config()
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range c.want {
			if !strings.Contains(cfg, w) {
				t.Errorf("%v: config lacks %q", c.given, w)
			}
		}
	}
}

// The judge on facts: stall blocks captured from a real 3.4.7 watchdog
// (made by `debug dev loop`, a CLI loop: known not to be the listener
// path), and the same block with dequeue_proxy_listeners in its trace.
func TestJudge(t *testing.T) {
	raw, err := os.ReadFile("../../fixtures/captures/3.4.7-1/master-log.txt")
	if err != nil {
		t.Fatal(err)
	}
	cli := cliout.ParseStalls(string(raw))
	onPath := cliout.ParseStalls(strings.Replace(string(raw), "debug_parse_cli_loop", "dequeue_proxy_listeners", 1))
	if len(cli) == 0 || len(onPath) == 0 {
		t.Fatal("the capture holds no stall")
	}
	p := params(t, map[string]string{"THREADS": "2", "MAXCONN": "100"})
	base := Facts{Params: p, Version: "3.4.7-1", Threads: 2, Groups: 2, Listeners: 2,
		Control: Round{Ran: true, Peaks: Peaks{Frontend: 60, FrontendLimit: 800, Process: 60, ProcessLimit: 800}},
		Attack:  Round{Ran: true, Peaks: Peaks{Frontend: 100, FrontendLimit: 100, Process: 100, ProcessLimit: 800}}}
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
		v, u, r := Judge(f)
		if !contains(v, c.violation) || !contains(u, c.unmet) || !contains(r, c.remark) {
			t.Errorf("%s: got %q, %q, %q", c.name, v, u, r)
		}
	}
	binds := base
	binds.Params = params(t, map[string]string{"THREADS": "2", "LAYOUT": "binds"})
	binds.Groups, binds.Listeners, binds.Attack.Stalls = 1, 2, onPath
	if v, u, _ := Judge(binds); v != "" || !strings.Contains(u, "several thread groups") {
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

// Only the parser's alert on the layout's keywords makes a build one that
// lacks thread groups; any other start failure is no such build.
func TestLayoutRefused(t *testing.T) {
	refused := "node1 on 2.2.0 did not become ready: the master exited with code 1\nlast log lines:\n[ALERT]    (1) : config : parsing [/etc/harp/haproxy.cfg:4] : unknown keyword 'thread-groups' in 'global' section\n[ALERT]    (1) : config : Fatal errors found in configuration."
	if got := layoutRefused(refused); !strings.Contains(got, "unknown keyword 'thread-groups'") {
		t.Fatalf("%q", got)
	}
	crashed := "node1 on 3.4.7 did not become ready: the master exited with code 139\nlast log lines:\n[NOTICE]   (1) : haproxy version is 3.4.7 with thread-groups 2\nSegmentation fault"
	if got := layoutRefused(crashed); got != "" {
		t.Fatalf("a crash whose log mentions thread-groups is not a refused layout: %q", got)
	}
}

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

func TestCPUsFor(t *testing.T) {
	if CPUsFor("0-3,6") != 5 || CPUsFor("") != runtime.NumCPU() {
		t.Errorf("CPUsFor: %d, %d", CPUsFor("0-3,6"), CPUsFor(""))
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
		{map[string]string{"VARIANT": "process", "LAYOUT": "binds"}, []string{"    maxconn 2000\n", "    maxconn 4000\n"}},
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

// The judge on facts: stall lines captured from a real 3.4.7 watchdog.
func TestJudge(t *testing.T) {
	logs, err := os.ReadFile("../../fixtures/captures/3.4.7-1/master-log.txt")
	if err != nil {
		t.Fatal(err)
	}
	stalls := cliout.ParseStalls(string(logs))
	if len(stalls) == 0 || longStalls(stalls) == 0 {
		t.Fatalf("the capture holds no stall over 100 ms: %v", stalls)
	}
	p := params(t, map[string]string{"THREADS": "2", "MAXCONN": "100"})
	base := Facts{Params: p, Version: "3.4.7-1", Threads: 2, Groups: 2, Listeners: 2, Attacked: true,
		Peaks: Peaks{Frontend: 100, FrontendLimit: 100, Process: 100, ProcessLimit: 4000}}
	for _, c := range []struct {
		name                     string
		edit                     func(f *Facts)
		violation, unmet, remark string
	}{
		{"limit reached, no stall: held", func(f *Facts) {}, "", "", "limit reached, 0 stalls over 100 ms"},
		{"a stall over 100 ms", func(f *Facts) { f.Stalls = stalls }, "stalls over 100 ms", "", ""},
		{"a master exit", func(f *Facts) { f.MasterExited, f.MasterCode = true, 134 }, "master exited (134)", "", ""},
		{"the limit never reached", func(f *Facts) { f.Peaks.Frontend = 60 }, "", "never reached its maxconn (peak 60 of 100)", ""},
		{"3.0 cannot show stalls", func(f *Facts) { f.Version = "3.0.11" }, "", "emits no stall warnings", ""},
		{"fewer listeners than the layout asks", func(f *Facts) { f.Listeners = 1 }, "", "the frontend has 1 listeners", ""},
		{"no attack is never a pass", func(f *Facts) { f.Attacked = false }, "", "the attack never ran", ""},
	} {
		f := base
		c.edit(&f)
		v, u, r := Judge(f)
		if !contains(v, c.violation) || !contains(u, c.unmet) || !contains(r, c.remark) {
			t.Errorf("%s: got %q, %q, %q", c.name, v, u, r)
		}
	}
}

// contains: want "" means got must be empty too.
func contains(got, want string) bool {
	if want == "" {
		return got == ""
	}
	return strings.Contains(got, want)
}

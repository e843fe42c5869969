package listenerlivelock

import (
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/harp-project/harp/harness/core/suite"
	"github.com/harp-project/harp/harness/live/cpus"
	"github.com/harp-project/harp/suites/listenerlivelock/judge"
)

func params(t *testing.T, given map[string]string) judge.Params {
	t.Helper()
	v, err := suite.ValuesFor(Suite.Params, given)
	if err != nil {
		t.Fatal(err)
	}
	return ParamsOf(v)
}

// machineUnmet is the machine's precondition as runLivelock checks it.
func machineUnmet(p judge.Params) string {
	return cpus.SplitUnmet(p.CPUSet, p.HAProxyCPUs, p.LoadCPUs, p.Threads, "the livelock")
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
		u := machineUnmet(p)
		if u == "" {
			u = p.LayoutUnmet()
		}
		need := p.Threads + 1 // HAProxy's threads and one CPU for the load
		if runtime.NumCPU() < need && u == "" {
			t.Errorf("%v on %d CPUs: no precondition failed", given, runtime.NumCPU())
		}
		if (p.Layout != "groups" || p.Groups < 2) && p.LayoutUnmet() == "" {
			t.Errorf("%v: a layout without several thread groups passed", given)
		}
	}
	if p := params(t, map[string]string{"THREADS": "2", "CPUSET": "0-1"}); runtime.NumCPU() <= 2 && !strings.Contains(machineUnmet(p), "headroom") {
		t.Errorf("every CPU to HAProxy leaves none for the load: %q", machineUnmet(p))
	}
	if p := params(t, map[string]string{"THREADS": "2", "CPUSET": "500-501"}); !strings.Contains(machineUnmet(p), "does not have") {
		t.Errorf("CPUs the machine lacks: %q", machineUnmet(p))
	}
}

func TestParams(t *testing.T) {
	if _, err := suite.ValuesFor(Suite.Params, map[string]string{"LAYOUT": "rings"}); err == nil || !strings.Contains(err.Error(), "groups, shards, binds") {
		t.Errorf("a layout that does not exist: %v", err)
	}
	if _, err := suite.ValuesFor(Suite.Params, map[string]string{"CPUSET": "3-1"}); err == nil {
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
	// The judge's tests build these by hand (the CPUs aside).
	p := params(t, map[string]string{"THREADS": "2", "MAXCONN": "100"})
	p.HAProxyCPUs, p.LoadCPUs = nil, nil
	if want := (judge.Params{Threads: 2, Groups: 2, Layout: "groups", Variant: "frontend", Rate: 1000, Duration: 15 * time.Second,
		FrontendMaxconn: 100, Service: 100 * time.Millisecond, Timeout: 30 * time.Second, ControlMaxconn: 90000}); !reflect.DeepEqual(p, want) {
		t.Errorf("THREADS=2 MAXCONN=100: %+v, the judge's tests assume %+v", p, want)
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
		cfg, err := Config(params(t, c.given))
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

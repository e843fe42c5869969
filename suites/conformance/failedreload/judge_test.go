package failedreload

import (
	"strings"
	"testing"
	"time"
)

func TestJudge(t *testing.T) {
	ok := func(f Facts) Facts {
		f.Break, f.Recovery, f.Bound = "a missing map file", "SIGUSR2", 15*time.Second
		return f
	}
	held := Facts{Reported: true, FailedBefore: 0, FailedAfter: 1, OldPID: 14, OldListed: true, HTTPAfter: 200, EntryWant: "1", EntryAfter: "1", Recovered: true, HTTPRecovered: 200}
	with := func(change func(*Facts)) Facts {
		f := ok(held)
		change(&f)
		return f
	}
	for _, c := range []struct {
		name             string
		f                Facts
		violation, unmet string
	}{
		{"nothing changed, the next reload took: held", ok(held), "", ""},
		{"the failure never counted", with(func(f *Facts) { f.Reported, f.FailedAfter = false, 0 }),
			"a missing map file, recovery by SIGUSR2: show proc never counted the failed reload within 15s (failed: 0 -> 0)", ""},
		{"the master blocks SIGUSR2 and the next reload never takes (a master that hangs)", with(func(f *Facts) {
			f.Blocked, f.Recovered, f.RecoveryErr = true, false, "no new worker listed 20s after SIGUSR2"
		}), "a missing map file, recovery by SIGUSR2: the master blocks SIGUSR2 after the failed reload; the next reload (SIGUSR2, good config) did not take: no new worker listed 20s after SIGUSR2", ""},
		{"old worker gone and its entry with it", with(func(f *Facts) {
			f.OldListed, f.HTTPAfter, f.EntryAfter = false, 0, "unreadable: worker 14 is gone"
		}), "a missing map file, recovery by SIGUSR2: the old worker 14 is gone after the failed reload; the old worker answered HTTP no answer after the failed reload; the old worker's table entry is unreadable: worker 14 is gone after the failed reload, want gpc0=1", ""},
		{"a new worker from a config that cannot load", with(func(f *Facts) { f.NewWorker = 18 }),
			"a missing map file, recovery by SIGUSR2: a new worker 18 started although the config could not load", ""},
		{"a master whose signals could not be read says nothing of them", with(func(f *Facts) { f.StatusErr = "reading the master's status: permission denied" }),
			"", "a missing map file: the master's signal state could not be read: reading the master's status: permission denied"},
		{"SIGUSR2 left pending", with(func(f *Facts) { f.Pending = true }), "a missing map file, recovery by SIGUSR2: SIGUSR2 is left pending on the master after the failed reload", ""},
		{"the master exited", with(func(f *Facts) { f.MasterExited = "the master exited with code 1 after the failed reload" }),
			"a missing map file, recovery by SIGUSR2: the master exited with code 1 after the failed reload", ""},
		{"a break this build loads is no break", with(func(f *Facts) {
			f.Setup = "haproxy -c accepts the config with a missing map file on this build: it is no break here"
		}), "", "a missing map file: haproxy -c accepts the config with a missing map file on this build: it is no break here"},
	} {
		v, u := Judge(c.f)
		if v != c.violation || u != c.unmet {
			t.Errorf("%s:\n got  %q, %q\n want %q, %q", c.name, v, u, c.violation, c.unmet)
		}
	}
}

func TestConfigs(t *testing.T) {
	good, err := Config("")
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range Breaks {
		bad, err := Config(b.Line)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(bad, "    "+b.Line+"\n") || strings.Contains(good, b.Line) {
			t.Errorf("%s: the break is not (only) in the broken config:\n%s", b.Name, bad)
		}
	}
}

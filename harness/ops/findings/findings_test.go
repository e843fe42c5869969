package findings

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/harp-project/harp/harness/core/verdict"
	"github.com/harp-project/harp/harness/ops/report"
)

func result(build, version string, v verdict.Verdict, checks ...verdict.Tally) report.Result {
	return report.Result{Suite: "conf-failed-reload", Title: "failed reloads", Build: "deb:" + version, Name: version, Version: version,
		Verdict: v, Checks: checks, Evidence: "01-x", CrashWatch: &verdict.CrashWatch{Nodes: 1}}
}

func TestLedger(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	crash := verdict.Crash{Node: "n1", PID: 7, Signal: "SIGSEGV", Process: "master", Suite: "conf-failed-reload", Signature: "f <- g <- h"}
	bad := result("deb:experimental", "3.4.7-1", verdict.Reproduced,
		verdict.Tally{ID: "master-survives", Failed: 1, Held: 1, Example: "the master exited with signal SIGSEGV after the failed reload"},
		verdict.Tally{ID: "failed-reload-counted", Failed: 1, Example: "show proc never counted the failed reload"})
	bad.Crashes = []verdict.Crash{crash, crash}
	good := result("deb:trixie", "3.0.11-1+deb13u5", verdict.Pass,
		verdict.Tally{ID: "master-survives", Held: 6}, verdict.Tally{ID: "failed-reload-counted", Held: 6})
	unsure := result("deb:sid", "3.2.26-1", verdict.Inconclusive, verdict.Tally{ID: "master-survives", Held: 2})
	// A REPRODUCED cell clears the checks it held and never failed.
	other := result("deb:sid", "3.2.26-1", verdict.Reproduced,
		verdict.Tally{ID: "master-survives", Held: 6}, verdict.Tally{ID: "failed-reload-counted", Failed: 3, Example: "never counted"})
	props := report.Result{Suite: "conf-reload-keeps-entries", Name: "2.6.12", Version: "2.6.12", Verdict: verdict.Reproduced, Reason: "lost 3 keys in 2 of 3 reloads\nmore"}
	runs := []Scanned{
		{Dir: "run-2", Run: report.Run{Started: t0.Add(time.Hour), Results: []report.Result{bad, other}}},
		{Dir: "run-1", Run: report.Run{Started: t0, Results: []report.Result{bad, good, unsure, props}}},
	}
	marks := Marks{"conf-failed-reload/failed-reload-counted": {State: StateFixed, Ref: "v3.4.2", At: t0.Add(30 * time.Minute)}}
	fs := Ledger(runs, marks)
	by := map[string]Finding{}
	for _, f := range fs {
		by[f.Signature] = f
	}
	if len(fs) != 4 {
		t.Fatalf("%d findings, want 4: %+v", len(fs), fs)
	}
	ms := by["conf-failed-reload/master-survives"]
	if len(ms.Shows) != 1 || ms.Shows[0].Name != "3.4.7-1" || ms.Shows[0].Runs != 2 {
		t.Errorf("master-survives shows %+v, want 3.4.7-1 in 2 runs", ms.Shows)
	}
	if names := buildNames(ms.Clean); names != "3.0.11-1+deb13u5 3.2.26-1" {
		t.Errorf("master-survives clean on %q, want 3.0.11 and 3.2.26 (held there; the INCONCLUSIVE cell clears nothing, the REPRODUCED one its held checks)", names)
	}
	if ms.FirstSeen.Run != "run-1" || ms.LastSeen.Run != "run-2" || ms.Status.State != StateNew {
		t.Errorf("master-survives seen %+v .. %+v, status %+v", ms.FirstSeen, ms.LastSeen, ms.Status)
	}
	if len(ms.Evidence) != 2 || ms.Evidence[0] != filepath.Join("run-1", "01-x") {
		t.Errorf("evidence %v", ms.Evidence)
	}
	uc := by["conf-failed-reload/failed-reload-counted"]
	if !uc.Regressed || uc.Status.Ref != "v3.4.2" || buildNames(uc.Shows) != "3.2.26-1 3.4.7-1" {
		t.Errorf("uncounted: %+v", uc)
	}
	cr := by["crash/master/SIGSEGV/f <- g <- h"]
	if cr.Kind != KindCrash || cr.Shows[0].Runs != 2 || buildNames(cr.Clean) != "3.0.11-1+deb13u5 3.2.26-1" {
		t.Errorf("crash: %+v (the same crash twice in a cell counts once; clean where its suite ran with a working watch)", cr)
	}
	p := by["conf-reload-keeps-entries"]
	if p.Kind != KindProperty || p.Example != "lost 3 keys in 2 of 3 reloads" {
		t.Errorf("property finding: %+v", p)
	}
	if f, err := Find(fs, ms.ID[:6]); err != nil || f.Signature != ms.Signature {
		t.Errorf("Find by id prefix: %v %v", f.Signature, err)
	}
	if _, err := Find(fs, "F-00"); err == nil || !strings.Contains(err.Error(), "the runs hold") {
		t.Errorf("Find unknown: %v", err)
	}
}

func buildNames(bs []Build) string {
	var n []string
	for _, b := range bs {
		n = append(n, b.Name)
	}
	return strings.Join(n, " ")
}

func TestMarks(t *testing.T) {
	for _, c := range []struct {
		state, ref string
		ok         bool
	}{
		{"reported", "haproxy/haproxy#3600", true},
		{"reported", "#12", true},
		{"reported", "https://github.com/haproxy/haproxy/issues/3600", true},
		{"reported", "", false},
		{"reported", "soon", false},
		{"fixed-in", "v3.4.2", true},
		{"fixed-in", "", false},
		{"fixed", "v3.4.2", false},
		{"not-haproxy", "the link proxy", true},
	} {
		if err := CheckMark(c.state, c.ref); (err == nil) != c.ok {
			t.Errorf("CheckMark(%q, %q) = %v, want ok %v", c.state, c.ref, err, c.ok)
		}
	}
	dir := t.TempDir()
	m, err := LoadMarks(dir)
	if err != nil || len(m) != 0 {
		t.Fatalf("no file: %v %v", m, err)
	}
	m["a/b"] = Status{State: StateReported, Ref: "haproxy/haproxy#1"}
	if err := SaveMarks(dir, m); err != nil {
		t.Fatal(err)
	}
	m2, err := LoadMarks(dir)
	if err != nil || m2.Of("a/b").Ref != "haproxy/haproxy#1" || m2.Of("x").State != StateNew {
		t.Errorf("round trip: %v %v", m2, err)
	}
	os.WriteFile(filepath.Join(dir, StatusFile), []byte("{"), 0o644)
	if _, err := LoadMarks(dir); err == nil {
		t.Errorf("a broken status file must be an error, not no marks")
	}
}

func TestScan(t *testing.T) {
	root := t.TempDir()
	if _, err := Scan(root); err == nil || !strings.Contains(err.Error(), "holds no harp run") {
		t.Errorf("empty: %v", err)
	}
	run := report.Run{ID: "r1", Started: time.Now(), Results: []report.Result{result("deb:x", "1.0", verdict.Pass)}}
	if _, err := report.Write(filepath.Join(root, "nightly"), run); err != nil {
		t.Fatal(err)
	}
	got, err := Scan(root)
	if err != nil || len(got) != 1 || got[0].Dir != filepath.Join("nightly", "r1") {
		t.Errorf("scan: %+v %v (latest is a link, not a second run)", got, err)
	}
	os.MkdirAll(filepath.Join(root, "broken"), 0o755)
	os.WriteFile(filepath.Join(root, "broken", "summary.json"), []byte("nope"), 0o644)
	if _, err := Scan(root); err == nil || !strings.Contains(err.Error(), "broken") {
		t.Errorf("an unreadable summary must be named: %v", err)
	}
}

// A bisect for one finding must not take another check's failure for its
// own, nor an unobserved check for a pass.
func TestVerdict(t *testing.T) {
	sig := "conf-failed-reload/master-survives"
	for _, c := range []struct {
		name string
		r    report.Result
		want verdict.Verdict
	}{
		{"shown", result("", "3.4.7", verdict.Reproduced, verdict.Tally{ID: "master-survives", Failed: 1}), verdict.Reproduced},
		{"another check failed, this one held", result("", "3.2.26", verdict.Reproduced,
			verdict.Tally{ID: "master-survives", Held: 6}, verdict.Tally{ID: "failed-reload-counted", Failed: 6}), verdict.Pass},
		{"another check failed, this one never observed", result("", "3.2.26", verdict.Reproduced, verdict.Tally{ID: "failed-reload-counted", Failed: 6}), verdict.Inconclusive},
		{"inconclusive suite", result("", "3.2.26", verdict.Inconclusive, verdict.Tally{ID: "master-survives", Held: 2}), verdict.Inconclusive},
		{"error", result("", "x", verdict.Error), verdict.Error},
	} {
		if v, why := Verdict(c.r, sig); v != c.want {
			t.Errorf("%s: %s (%s), want %s", c.name, v, why, c.want)
		}
	}
	crash := "crash/master/SIGSEGV/f <- g"
	r := result("", "3.4.7", verdict.Reproduced)
	r.Crashes = []verdict.Crash{{Process: "master", Signal: "SIGSEGV", Signature: "f <- g"}}
	if v, _ := Verdict(r, crash); v != verdict.Reproduced {
		t.Errorf("crash shown: %s", v)
	}
	r.Crashes = nil
	if v, _ := Verdict(r, crash); v != verdict.Pass {
		t.Errorf("crash absent, every node watched: %s", v)
	}
	r.CrashWatch = &verdict.CrashWatch{Nodes: 1, Failed: []string{"n2: docker logs failed"}}
	if v, _ := Verdict(r, crash); v != verdict.Inconclusive {
		t.Errorf("crash absent, a node unwatched: %s", v)
	}
}

// On a real run (conf-failed-reload and conf-cli-permissions on Debian's
// 3.0.11, 3.2.26 and 3.4.7, 2026-12-01): the two master-worker bugs and
// the refused set table are each their own finding, on the builds that
// show them, and clean where their check held.
func TestLedgerOfARealRun(t *testing.T) {
	runs, err := Scan("testdata")
	if err != nil {
		t.Fatal(err)
	}
	fs := Ledger(runs, nil)
	by := map[string]Finding{}
	for _, f := range fs {
		by[f.Signature] = f
	}
	for sig, want := range map[string][2]string{
		"conf-failed-reload/master-survives.syntax-error":                                                                   {"3.4.7-1", "3.0.11-1+deb13u5 3.2.26-1"},
		"conf-failed-reload/failed-reload-counted.syntax-error":                                                             {"3.2.26-1", "3.0.11-1+deb13u5"},
		"conf-cli-permissions/user.set-table.refusal-changes-nothing":                                                       {"3.0.11-1+deb13u5", "3.2.26-1 3.4.7-1"},
		"crash/master/Segmentation fault/conn_complete_session <- session_accept_fd <- listener_accept <- fd_update_events": {"3.4.7-1", "3.0.11-1+deb13u5 3.2.26-1"},
	} {
		f, ok := by[sig]
		if !ok {
			t.Errorf("no finding %s", sig)
			continue
		}
		if got := buildNames(f.Shows); got != want[0] {
			t.Errorf("%s shows on %q, want %q", sig, got, want[0])
		}
		if got := buildNames(f.Clean); got != want[1] {
			t.Errorf("%s clean on %q, want %q", sig, got, want[1])
		}
	}
	// 3.4.7's master dies on the syntax error before show proc could count
	// it: that check is neither shown nor clean there.
	for _, b := range by["conf-failed-reload/failed-reload-counted.syntax-error"].Clean {
		if b.Name == "3.4.7-1" {
			t.Errorf("3.4.7 cannot be clean of a check its crash kept from being observed")
		}
	}
}

package repro_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/harp-project/harp/harness/core/obs"
	"github.com/harp-project/harp/harness/core/verdict"
	"github.com/harp-project/harp/harness/ops/findings"
	"github.com/harp-project/harp/harness/ops/report"
	"github.com/harp-project/harp/harness/ops/repro"
	"github.com/harp-project/harp/suites/conformance/clipermissions"
	clijudge "github.com/harp-project/harp/suites/conformance/clipermissions/judge"
	"github.com/harp-project/harp/suites/conformance/craftedupdatesobeyreceiver"
	craftedjudge "github.com/harp-project/harp/suites/conformance/craftedupdatesobeyreceiver/judge"
	"github.com/harp-project/harp/suites/conformance/failedreload"
	reloadjudge "github.com/harp-project/harp/suites/conformance/failedreload/judge"
	"github.com/harp-project/harp/suites/conformance/learnedentriesobeyreceiver"
	learnedjudge "github.com/harp-project/harp/suites/conformance/learnedentriesobeyreceiver/judge"
)

func TestLocalize(t *testing.T) {
	cfg := `global
    stats socket ipv4@0.0.0.0:9998 level admin
    stats socket ipv4@0.0.0.0:9995 level user
    # bind 0.0.0.0:1 is a comment
frontend web
    bind 0.0.0.0:8080
    http-request set-var(txn.m) req.hdr(host),map(/etc/harp/m.map)
    acl blocked src -f /etc/harp/a.acl
backend be
    server srv 127.0.0.1:8081 check agent-port 8082
peers p
    peer harp 0.0.0.0:10000
`
	l, err := repro.Localize(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`stats socket "${REPRO_DIR}/admin.sock" level admin`,
		`stats socket "${REPRO_DIR}/user.sock" level user`,
		`# bind 0.0.0.0:1 is a comment`,
		`bind "127.0.0.1:${PORT_8080}"`,
		`set-var(txn.m) "req.hdr(host),map(${REPRO_DIR}/m.map)"`,
		`src -f "${REPRO_DIR}/a.acl"`,
		`server srv "127.0.0.1:${PORT_8081}" check agent-port 8082`,
		`peer harp "127.0.0.1:${PORT_10000}"`,
	} {
		if !strings.Contains(l.Config, want) {
			t.Errorf("localized config lacks %q:\n%s", want, l.Config)
		}
	}
	if strings.Join(l.Ports, " ") != "8080 8081 10000" {
		t.Errorf("ports %v, want 8080 8081 10000 in order", l.Ports)
	}
	if l.Sockets["admin"] != "admin.sock" || l.Sockets["user"] != "user.sock" {
		t.Errorf("sockets %v", l.Sockets)
	}
	if _, err := repro.Localize(`    http-request set-header x "/etc/harp/x"` + "\n"); err == nil {
		t.Errorf("a quoted /etc/harp path must be an error, not a path left behind")
	}
}

// failedReloadResult is a conf-failed-reload result like 3.4.7's: cycle 1
// (missing map) held, cycle 2 (syntax error) the master died.
func failedReloadResult(t *testing.T) (findings.Finding, report.Result) {
	t.Helper()
	good, err := failedreload.Config(failedreload.Break{})
	if err != nil {
		t.Fatal(err)
	}
	var trials []verdict.Trial
	for i, b := range failedreload.Breaks[:2] {
		broken, err := failedreload.Config(b)
		if err != nil {
			t.Fatal(err)
		}
		f := reloadjudge.Facts{Break: b.Name, BreakID: b.ID, Recovery: "SIGUSR2", Bound: 20 * time.Second, Master: obs.Value(obs.Exit{}), OldPID: 8,
			Procs: obs.Value(reloadjudge.ProcsAfter{Failed: 1, Counted: true, OldListed: true}), HTTP: obs.Value(200), EntryWant: "1",
			Entry: obs.Value("1"), Signals: obs.Value(reloadjudge.Signals{}), Recovered: true, HTTPRecovered: obs.Opt(obs.Value(200))}
		if i == 1 {
			f = reloadjudge.Facts{Break: b.Name, BreakID: b.ID, Recovery: "SIGUSR2", Bound: 20 * time.Second,
				Master: obs.Value(obs.Exit{Process: "master", Code: 139, Signal: "Segmentation fault"})}
		}
		cs, violation, _ := reloadjudge.CycleChecks(f)
		trials = append(trials, verdict.Trial{N: i + 1, Checks: cs, Violation: violation, Evidence: failedreload.Evidence{Facts: f, Broken: broken}})
	}
	r := report.Result{Suite: reloadjudge.SuiteID, Title: failedreload.Suite.Title, Build: "deb:experimental", Name: "3.4.7-1", Version: "3.4.7-1",
		Image: "harp-haproxy:deb-3.4.7-1-x", Verdict: verdict.Reproduced, Config: good, Trials: roundTrip(t, trials), Evidence: "06-conf-failed-reload-3.4.7-1",
		Checks: verdict.TallyChecks(trials)}
	sig := reloadjudge.SuiteID + "/master-survives.syntax-error"
	f := findings.Finding{ID: findings.ID(sig), Signature: sig, Kind: findings.KindCheck, Suite: r.Suite, Check: "master-survives.syntax-error",
		Title: r.Title, Example: "the master exited on Segmentation fault after the failed reload",
		Shows: []findings.Build{{Name: "3.4.7-1", Spec: "deb:experimental", Runs: 1}}, Clean: []findings.Build{{Name: "3.0.11-1+deb13u5", Spec: "deb:trixie", Runs: 1}}}
	return f, r
}

// roundTrip gives trials as report.Load does: their evidence JSON maps.
func roundTrip(t *testing.T, ts []verdict.Trial) []verdict.Trial {
	t.Helper()
	dir := t.TempDir()
	if _, err := report.Write(dir, report.Run{ID: "r", Results: []report.Result{{Suite: "s", Name: "b", Config: "x", Trials: ts}}}); err != nil {
		t.Fatal(err)
	}
	run, err := report.Load(filepath.Join(dir, "r"))
	if err != nil {
		t.Fatal(err)
	}
	return run.Results[0].Trials
}

func TestFailedReload(t *testing.T) {
	f, r := failedReloadResult(t)
	rp, err := repro.For(f, r)
	if err != nil {
		t.Fatal(err)
	}
	if rp.Lang != repro.Sh || rp.From.Build != "3.4.7-1" {
		t.Errorf("lang %s, from %+v", rp.Lang, rp.From)
	}
	script, _ := rp.File("reproduce")
	for _, want := range []string{
		"#!/bin/sh\n",
		"harp finding " + f.ID + ": conf-failed-reload/master-survives.syntax-error",
		"CHECK=master-survives ",
		"BREAK=syntax-error ",
		"BOUND=20 ",
		`PORTS="8080"`,
		"cycle 1 missing-map 'a missing map file' 'SIGUSR2'\ncycle 2 syntax-error 'a syntax error' 'SIGUSR2'\n",
		"trap cleanup EXIT",
		`-S "$DIR/master.sock"`,
		`kill -USR2 "$MASTER"`,
		`"$HAPROXY" -c -f "$DIR/broken.cfg"`,
		`http_status "$PORT_8080"`,
	} {
		if !strings.Contains(script, want) {
			t.Errorf("script lacks %q", want)
		}
	}
	if strings.Contains(script, "sleep 1\n") || strings.Contains(script, "{{") {
		t.Errorf("a fixed sleep or an unrendered template in the script")
	}
	broken, ok := rp.File("broken-syntax-error.cfg")
	if !ok || !strings.Contains(broken, `http-request set-header x-a "unterminated`) || !strings.Contains(broken, `"${REPRO_DIR}/admin.sock"`) {
		t.Errorf("broken config:\n%s", broken)
	}
	if mm, _ := rp.File("broken-missing-map.cfg"); !strings.Contains(mm, `"%[req.hdr(host),map(${REPRO_DIR}/absent.map)]"`) {
		t.Errorf("missing-map break not localized:\n%s", mm)
	}
	shSyntax(t, script)

	// The crash finding of the same master is the same script.
	crashSig := "crash/master/Segmentation fault/conn_complete_session <- session_accept_fd"
	cf := findings.Finding{ID: findings.ID(crashSig), Signature: crashSig, Kind: findings.KindCrash, Suite: r.Suite, Title: "the master dies (Segmentation fault)"}
	crp, err := repro.For(cf, r)
	if err != nil {
		t.Fatal(err)
	}
	if cs, _ := crp.File("reproduce"); !strings.Contains(cs, "CHECK=master-survives ") || !strings.Contains(cs, "BREAK=syntax-error ") || !strings.Contains(crp.Reproduces, "cycle 2") {
		t.Errorf("crash reproducer: %q", crp.Reproduces)
	}

	// A check that never failed in the evidence has no cycle to replay.
	other := f
	other.Check = "failed-reload-counted.syntax-error"
	other.Signature = r.Suite + "/" + other.Check
	if _, err := repro.For(other, r); err == nil || !strings.Contains(err.Error(), "no cycle") {
		t.Errorf("a check the evidence never failed: %v", err)
	}
}

func TestCLIPermissions(t *testing.T) {
	cfg, err := clipermissions.Config()
	if err != nil {
		t.Fatal(err)
	}
	call := clijudge.Call{Command: "set table tbl key harp-new data.gpc0 1", Level: "operator", Answer: "Permission denied", Refused: true,
		Changed: "[harp-key gpc0=5] -> [harp-key gpc0=5, harp-new gpc0=0]"}
	mapCall := clijudge.Call{Command: "add map /etc/harp/m.map k v", Level: "operator", Changed: "[k v0] -> [k v0, k v]"}
	facts := clijudge.Facts{Socket: "user", Changes: []clijudge.Call{call, mapCall}}
	cs, violation, _ := clijudge.SocketChecks(facts)
	r := report.Result{Suite: clijudge.SuiteID, Title: clipermissions.Suite.Title, Build: "deb:trixie", Name: "3.0.11-1+deb13u5", Verdict: verdict.Reproduced,
		Config: cfg, Evidence: "01-x", Trials: roundTrip(t, []verdict.Trial{{N: 1, Checks: cs, Violation: violation, Evidence: clijudge.Evidence{Facts: facts}}})}
	for _, c := range []struct{ check, probe, cmd, steps string }{
		{"user.set-table.refusal-changes-nothing", `PROBE="table"`, `CMD="set table tbl key harp-new data.gpc0 1"`,
			"\nstep admin \"set table tbl key harp-key data.gpc0 5\"\n\n"},
		{"user.add-map.level-enforced", `PROBE="map:${REPRO_DIR}/m.map"`, `CMD="add map ${REPRO_DIR}/m.map k v"`,
			"\nstep admin \"set table tbl key harp-key data.gpc0 5\"\nstep user \"set table tbl key harp-new data.gpc0 1\"\n\n"},
	} {
		sig := r.Suite + "/" + c.check
		f := findings.Finding{ID: findings.ID(sig), Signature: sig, Kind: findings.KindCheck, Suite: r.Suite, Check: c.check, Title: r.Title}
		rp, err := repro.For(f, r)
		if err != nil {
			t.Fatalf("%s: %v", c.check, err)
		}
		script, _ := rp.File("reproduce")
		_, what, _ := strings.Cut(strings.TrimPrefix(c.check, "user."), ".")
		for _, want := range []string{"SOCKET=user ", "LEVEL=operator ", "WHAT=" + what + " ", c.probe, c.cmd, `PORTS="8080 8081"`, `printf 'k v0\n' >"$DIR/m.map"`, c.steps, `refused "$GOT"`} {
			if !strings.Contains(script, want) {
				t.Errorf("%s: script lacks %q", c.check, want)
			}
		}
		shSyntax(t, script)
		hcfg, _ := rp.File("haproxy.cfg")
		for _, want := range []string{`"${REPRO_DIR}/operator.sock" level operator`, `"${REPRO_DIR}/user.sock" level user`, `"req.hdr(host),map(${REPRO_DIR}/m.map)"`} {
			if !strings.Contains(hcfg, want) {
				t.Errorf("config lacks %q", want)
			}
		}
	}
	// Two commands share user.clear-table.*: the judged one is the one
	// whose outcome failed the check, the other a step before it.
	facts.Changes = []clijudge.Call{{Command: "clear table tbl key harp-key", Level: "operator", Answer: "Permission denied", Refused: true},
		{Command: "clear table tbl", Level: "operator"}}
	cs, violation, _ = clijudge.SocketChecks(facts)
	r.Trials = roundTrip(t, []verdict.Trial{{N: 1, Checks: cs, Violation: violation, Evidence: clijudge.Evidence{Facts: facts}}})
	sig := r.Suite + "/user.clear-table.no-false-success"
	rp, err := repro.For(findings.Finding{Signature: sig, Kind: findings.KindCheck, Suite: r.Suite, Check: "user.clear-table.no-false-success"}, r)
	if err != nil {
		t.Fatal(err)
	}
	if script, _ := rp.File("reproduce"); !strings.Contains(script, `CMD="clear table tbl"`+"\n") || !strings.Contains(script, `step user "clear table tbl key harp-key"`) {
		t.Errorf("the judged command is the one that failed the check:\n%s", script)
	}
}

func TestLearnedExpiry(t *testing.T) {
	node := "global\n    nbthread 1\n    localpeer harp\n    stats socket ipv4@0.0.0.0:9998 level admin\n    stats timeout 1m\n\npeers crafted\n    peer harp 0.0.0.0:10000\n    peer remote 127.0.0.1:10999\n    table t type string len 32 size 1k expire 10s store gpc0\n"
	ts := []verdict.Trial{
		{N: 1, Violation: "huge expiry: a timed update with expire 2147483647 ms made ce-001 expire in 2147480000 ms", Evidence: craftedjudge.Evidence{Kind: "huge expiry"}},
		{N: 2, Evidence: craftedjudge.Evidence{Kind: "unknown table"}},
	}
	r := report.Result{Suite: craftedjudge.SuiteID, Title: craftedupdatesobeyreceiver.Suite.Title, Build: "deb:bookworm", Name: "2.6.12-1+deb12u4", Verdict: verdict.Reproduced,
		Config: node, Evidence: "01-x", Trials: roundTrip(t, ts)}
	// The suite names a check per kind; results recorded before it did
	// make a finding of the whole property.
	sig := craftedjudge.SuiteID + "/huge-expiry"
	f := findings.Finding{ID: findings.ID(sig), Signature: sig, Kind: findings.KindCheck, Suite: craftedjudge.SuiteID, Check: "huge-expiry", Title: r.Title}
	learnedScript(t, f, r)
	old := findings.Finding{ID: findings.ID(craftedjudge.SuiteID), Signature: craftedjudge.SuiteID, Kind: findings.KindProperty, Suite: craftedjudge.SuiteID, Title: r.Title}
	learnedScript(t, old, r)
	other := findings.Finding{Signature: craftedjudge.SuiteID + "/unknown-table", Kind: findings.KindCheck, Suite: craftedjudge.SuiteID, Check: "unknown-table"}
	if repro.Has(other) {
		t.Errorf("the script reproduces the huge expiry only, not %s", other.Signature)
	}
	// Only a result where the huge-expiry trial was violated makes it.
	r.Trials = r.Trials[1:]
	if _, err := repro.For(f, r); err == nil || !strings.Contains(err.Error(), `"huge expiry"`) {
		t.Errorf("without the crafted violation: %v", err)
	}
}

// A result recorded while the crafted checks were part of
// conf-learned-entries-obey-receiver: the node's config follows the two
// real nodes', and the check's name has a prefix.
func TestLearnedExpiryLegacy(t *testing.T) {
	node := "global\n    nbthread 1\n    localpeer harp\n    stats socket ipv4@0.0.0.0:9998 level admin\n    stats timeout 1m\n\npeers crafted\n    peer harp 0.0.0.0:10000\n    peer remote 127.0.0.1:10999\n    table t type string len 32 size 1k expire 10s store gpc0\n"
	cfg := "global\n    stats socket ipv4@0.0.0.0:9998 level admin\npeers cluster\n    peer node1 node1:10000\n\n# ---- nodeC (harp's peers client plays its remote peer)\n" + node
	ts := []verdict.Trial{
		{N: 2, Violation: "expire, learnt by resync: B's entry ...", Evidence: learnedjudge.Evidence{Kind: "expire, learnt by resync"}},
		{N: 6, Violation: "crafted: huge expiry: a timed update with expire 2147483647 ms made ce-006 expire in 2147480000 ms", Evidence: learnedjudge.Evidence{Kind: "crafted: huge expiry"}},
	}
	r := report.Result{Suite: learnedjudge.SuiteID, Title: learnedentriesobeyreceiver.Suite.Title, Build: "deb:bookworm", Name: "2.6.12-1+deb12u4", Verdict: verdict.Reproduced,
		Config: cfg, Evidence: "01-x", Trials: roundTrip(t, ts)}
	sig := learnedjudge.SuiteID
	f := findings.Finding{ID: findings.ID(sig), Signature: sig, Kind: findings.KindProperty, Suite: sig, Title: r.Title}
	learnedScript(t, f, r)
	r.Trials = r.Trials[:1]
	if _, err := repro.For(f, r); err == nil || !strings.Contains(err.Error(), "crafted: huge expiry") {
		t.Errorf("without the crafted violation: %v", err)
	}
}

// learnedScript checks the reproducer made for a crafted node's result.
func learnedScript(t *testing.T, f findings.Finding, r report.Result) {
	t.Helper()
	rp, err := repro.For(f, r)
	if err != nil {
		t.Fatal(err)
	}
	script, _ := rp.File("reproduce")
	for _, want := range []string{"#!/usr/bin/env python3\n", `SECTION, LOCAL, REMOTE, TABLE = "crafted", "harp", "remote", "t"`, "EXPIRE_MS = 10000 ",
		`PEER_PORT = "10000"`, `PORTS = ["10000", "10999"]`, "HAProxyS 2.1", "0x85", "start_new_session=True"} {
		if !strings.Contains(script, want) {
			t.Errorf("script lacks %q", want)
		}
	}
	hcfg, _ := rp.File("haproxy.cfg")
	if strings.Contains(hcfg, "cluster") || !strings.Contains(hcfg, `peer harp "127.0.0.1:${PORT_10000}"`) || !strings.Contains(hcfg, `peer remote "127.0.0.1:${PORT_10999}"`) {
		t.Errorf("the crafted node's config only, localized:\n%s", hcfg)
	}
	pyCompile(t, script)
}

func TestNoGenerator(t *testing.T) {
	f := findings.Finding{Signature: "3517", Kind: findings.KindProperty, Suite: "3517"}
	_, err := repro.For(f, report.Result{})
	if err == nil || !strings.Contains(err.Error(), "no reproducer generator for 3517") || !strings.Contains(err.Error(), "conf-failed-reload/<check>.<break>") ||
		!strings.Contains(err.Error(), "conf-crafted-updates-obey-receiver") {
		t.Errorf("%v", err)
	}
	if repro.Has(f) {
		t.Errorf("3517 has no generator")
	}
}

func TestJudge(t *testing.T) {
	at := time.Now()
	shows := repro.Run{Build: "3.4.7-1", Harp: verdict.Reproduced, Exit: 1, Said: "REPRODUCED: x"}
	clean := repro.Run{Build: "3.0.11", Harp: verdict.Pass, Exit: 0, Said: "PASS: y"}
	for _, c := range []struct {
		name  string
		runs  []repro.Run
		state string
		exit  int
	}{
		{"agrees on both", []repro.Run{shows, clean}, repro.Verified, 0},
		{"only the showing build", []repro.Run{shows}, repro.Unverified, 2},
		{"PASS where harp saw it: wrong", []repro.Run{{Build: "3.4.7-1", Harp: verdict.Reproduced, Exit: 0, Said: "PASS: z"}, clean}, repro.Unverified, 1},
		{"REPRODUCED where clean: wrong", []repro.Run{shows, {Build: "3.0.11", Harp: verdict.Pass, Exit: 1, Said: "REPRODUCED: z"}}, repro.Unverified, 1},
		{"INCONCLUSIVE says nothing", []repro.Run{shows, {Build: "3.0.11", Harp: verdict.Pass, Exit: 2, Said: "INCONCLUSIVE: no socket"}}, repro.Unverified, 2},
		{"an exit without a verdict line", []repro.Run{shows, {Build: "3.0.11", Harp: verdict.Pass, Exit: 0}}, repro.Unverified, 2},
		{"not run", []repro.Run{shows, {Build: "3.0.11", Harp: verdict.Pass, Err: "no apt-get"}}, repro.Unverified, 2},
	} {
		v := repro.Judge(c.runs, at)
		if v.State != c.state || v.ExitCode() != c.exit {
			t.Errorf("%s: %s (%s) exit %d, want %s exit %d", c.name, v.State, v.Why, v.ExitCode(), c.state, c.exit)
		}
	}
	if got := repro.SaidLine("[x] note\nINCONCLUSIVE: first\nPASS: a\nhaproxy's last output:\n"); got != "PASS: a" {
		t.Errorf("SaidLine: %q", got)
	}
}

func TestWriteAndREADME(t *testing.T) {
	f, r := failedReloadResult(t)
	rp, err := repro.For(f, r)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	v := repro.Judge([]repro.Run{{Build: "3.4.7-1", Spec: "deb:experimental", Harp: verdict.Reproduced, Exit: 1, Said: "REPRODUCED: died", Output: "REPRODUCED: died\n"},
		{Build: "3.0.11-1+deb13u5", Harp: verdict.Pass, Exit: 0, Said: "PASS: held", Output: "PASS: held\n"}}, time.Now())
	if err := rp.Write(dir, v); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(dir, "reproduce"))
	if err != nil || st.Mode().Perm()&0o111 == 0 {
		t.Errorf("reproduce not executable: %v %v", st, err)
	}
	readme, _ := os.ReadFile(filepath.Join(dir, "README.md"))
	for _, want := range []string{"**Verified** by harp", "./reproduce /usr/sbin/haproxy", "Shows it: 3.4.7-1 (`deb:experimental`)", "Clean (looked for, not seen): 3.0.11-1+deb13u5 (`deb:trixie`)",
		"REPRODUCED on 3.4.7-1, PASS on 3.0.11-1+deb13u5", "`broken-syntax-error.cfg`"} {
		if !strings.Contains(string(readme), want) {
			t.Errorf("README lacks %q:\n%s", want, readme)
		}
	}
	verified, _ := os.ReadFile(filepath.Join(dir, "verified.txt"))
	if !strings.Contains(string(verified), "VERIFIED") || !strings.Contains(string(verified), "-> exit 1") {
		t.Errorf("verified.txt:\n%s", verified)
	}
	bad := repro.Judge([]repro.Run{{Build: "3.4.7-1", Harp: verdict.Reproduced, Exit: 0, Said: "PASS: held"}}, time.Now())
	if md := rp.README(bad); !strings.HasPrefix(strings.SplitN(md, "\n\n", 2)[1], "**UNVERIFIED**") {
		t.Errorf("an unverified reproducer must say so first:\n%s", md)
	}
	if md := rp.README(repro.Verification{State: repro.Skipped}); !strings.Contains(md, "--no-verify") {
		t.Errorf("--no-verify must be said:\n%s", md)
	}
}

// shSyntax checks a script with sh -n (and dash's, when there).
func shSyntax(t *testing.T, script string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "reproduce")
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, sh := range []string{"sh", "dash", "bash"} {
		if _, err := exec.LookPath(sh); err != nil {
			continue
		}
		if out, err := exec.Command(sh, "-n", path).CombinedOutput(); err != nil {
			t.Errorf("%s -n: %v\n%s", sh, err, out)
		}
	}
}

func pyCompile(t *testing.T, script string) {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed: the repro.Python reproducer's syntax is not checked")
	}
	path := filepath.Join(t.TempDir(), "reproduce.py")
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("python3", "-m", "py_compile", path).CombinedOutput(); err != nil {
		t.Errorf("python3 -m py_compile: %v\n%s", err, out)
	}
}

// shq quotes a word for sh, as the scripts' own shq does.
func shq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

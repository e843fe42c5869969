package repro_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/harp-project/harp/harness/core/verdict"
	"github.com/harp-project/harp/harness/ops/findings"
	"github.com/harp-project/harp/harness/ops/report"
	"github.com/harp-project/harp/harness/ops/repro"
	"github.com/harp-project/harp/suites/conformance/craftedupdatesobeyreceiver"
	craftedjudge "github.com/harp-project/harp/suites/conformance/craftedupdatesobeyreceiver/judge"
)

// These tests run the rendered scripts without HAProxy: a fake haproxy
// (an sh script) and, for the sh scripts, a fake socat that plays its
// master CLI. They check what the script does on its own failures and
// how it cleans up, not HAProxy's behaviour (the selftest does that).

// scriptRun is one run of a reproducer.
type scriptRun struct {
	code           int
	stdout, stderr string
	took           time.Duration
}

// runScript runs dir/reproduce with args under env (added to the
// test's), killed after limit.
func runScript(t *testing.T, dir string, env []string, limit time.Duration, args ...string) scriptRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(dir, "reproduce"), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.WaitDelay = time.Second // a left child holding the pipes must not hang the test
	start := time.Now()
	err := cmd.Run()
	r := scriptRun{stdout: out.String(), stderr: errb.String(), took: time.Since(start)}
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		r.code = -1
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		t.Fatalf("running the reproducer: %v", err)
	}
	return r
}

// writeScript writes a reproducer's files into a new directory.
func writeScript(t *testing.T, rp repro.Repro) string {
	t.Helper()
	dir := t.TempDir()
	if err := rp.Write(dir, repro.Verification{State: repro.Skipped}); err != nil {
		t.Fatal(err)
	}
	return dir
}

func writeExec(t *testing.T, path, text string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func learnedRepro(t *testing.T) repro.Repro {
	t.Helper()
	node := "global\n    nbthread 1\n    localpeer harp\n    stats socket ipv4@0.0.0.0:9998 level admin\n\npeers crafted\n    peer harp 0.0.0.0:10000\n    peer remote 127.0.0.1:10999\n    table t type string len 32 size 1k expire 10s store gpc0\n"
	ts := []verdict.Trial{{N: 1, Violation: "huge expiry: ...", Evidence: craftedjudge.Evidence{Kind: "huge expiry"}}}
	r := report.Result{Suite: craftedjudge.SuiteID, Title: craftedupdatesobeyreceiver.Suite.Title, Build: "deb:bookworm", Name: "2.6.12-1+deb12u4", Verdict: verdict.Reproduced,
		Config: node, Evidence: "01-x", Trials: roundTrip(t, ts)}
	f := findings.Finding{ID: findings.ID(craftedjudge.SuiteID), Signature: craftedjudge.SuiteID, Kind: findings.KindProperty, Suite: craftedjudge.SuiteID, Title: r.Title}
	rp, err := repro.For(f, r)
	if err != nil {
		t.Fatal(err)
	}
	return rp
}

// A reproducer exits 1 only when it saw the bug: its own failures (a
// binary that is not haproxy, no temporary directory, an exception) are
// INCONCLUSIVE, exit 2, and say on stderr what failed.
func TestPythonOwnFailures(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	rp := learnedRepro(t)
	dir := writeScript(t, rp)
	// -v answers as haproxy; -c fails without a word (the IndexError of #40).
	fake := writeExec(t, filepath.Join(t.TempDir(), "haproxy"), "#!/bin/sh\ncase $1 in -v) echo 'HAProxy version 0.0-fake 2099/01/01'; exit 0 ;; esac\nexit 1\n")
	broken := t.TempDir()
	script, _ := rp.File("reproduce")
	injected := strings.Replace(script, "def run(haproxy, tmp, procs):\n", "def run(haproxy, tmp, procs):\n    raise IndexError('injected failure')\n", 1)
	if injected == script {
		t.Fatal("run() not found in the repro.Python script")
	}
	writeExec(t, filepath.Join(broken, "reproduce"), injected)
	for _, c := range []struct {
		name, dir string
		env       []string
		arg       string
		want      []string // on stderr: the script's own failure
		verdict   bool     // on stdout instead: HAProxy's answer made it INCONCLUSIVE
	}{
		{"not haproxy", dir, nil, "/bin/false", []string{"/bin/false", "not haproxy"}, false},
		{"-c fails silently", dir, nil, fake, []string{"haproxy -c refuses the config (exit 1): it said nothing"}, true},
		{"no temporary directory", dir, []string{"TMPDIR=/nonexistent"}, fake, []string{"temporary directory", "/nonexistent"}, false},
		{"an uncaught exception", broken, nil, fake, []string{"IndexError", "injected failure"}, false},
	} {
		r := runScript(t, c.dir, c.env, 30*time.Second, c.arg)
		if r.code != repro.ExitInconclusive {
			t.Errorf("%s: exit %d, want %d (INCONCLUSIVE: never 1, REPRODUCED)\nstdout:\n%s\nstderr:\n%s", c.name, r.code, repro.ExitInconclusive, r.stdout, r.stderr)
			continue
		}
		said := r.stderr
		if c.verdict {
			said = r.stdout
		}
		for _, w := range c.want {
			if !strings.Contains(said, w) {
				t.Errorf("%s: the problem (%q) is not named:\nstdout:\n%s\nstderr:\n%s", c.name, w, r.stdout, r.stderr)
			}
		}
		if !strings.Contains(r.stdout+r.stderr, "INCONCLUSIVE: ") {
			t.Errorf("%s: no INCONCLUSIVE line:\n%s%s", c.name, r.stdout, r.stderr)
		}
	}
}

// fakeBin is a directory with a fake socat that plays the master CLI of
// the fake haproxy: show proc reads the fake-procs file it writes beside
// the master socket; HTTP gets a 200; anything else an empty answer.
func fakeBin(t *testing.T) string {
	t.Helper()
	bin := t.TempDir()
	writeExec(t, filepath.Join(bin, "socat"), `#!/bin/sh
for a; do last=$a; done
cmd=$(cat)
case $last in
UNIX-CONNECT:*)
	p=${last#UNIX-CONNECT:}
	case $cmd in "show proc") cat "${p%/*}/fake-procs" 2>/dev/null ;; esac ;;
TCP:*) printf 'HTTP/1.0 200 OK\r\n\r\n' ;;
esac
`)
	return bin
}

// fakeHAProxy writes an sh "haproxy" that accepts any config and, run
// as a master (-W -db -f CFG -S SOCK), starts a long-lived worker
// (sleep), lists both in fake-procs for the fake socat, and writes both
// pids to the file pids for the test.
func fakeHAProxy(t *testing.T, dir, pids string) string {
	t.Helper()
	return writeExec(t, filepath.Join(dir, "haproxy"), `#!/bin/sh
case $1 in
-v) echo 'HAProxy version 0.0-fake 2099/01/01'; exit 0 ;;
-c) exit 0 ;;
esac
sock=$6
sleep 300 &
printf '#<PID>          <type>          <reloads>       <uptime>        <version>\n%s master 0 0d00h00m01s 0.0\n# workers\n%s worker 0 0d00h00m01s 0.0\n' $$ $! >"${sock%/*}/fake-procs"
echo "$$ $!" >`+shq(pids)+`
wait
`)
}

// running says whether pid is a live process (not gone, not a zombie).
func running(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return syscall.Kill(pid, 0) == nil
	}
	s := string(b)
	rest := s[strings.LastIndex(s, ")")+1:]
	return !strings.HasPrefix(strings.TrimSpace(rest), "Z")
}

// leftOver reads the fake's pids and says which still run after a
// moment; whatever is left is killed when the test ends.
func leftOver(t *testing.T, pids string) []int {
	t.Helper()
	b, err := os.ReadFile(pids)
	if err != nil {
		t.Fatalf("the fake haproxy never ran as a master: %v", err)
	}
	var ps []int
	for _, f := range strings.Fields(string(b)) {
		p, _ := strconv.Atoi(f)
		ps = append(ps, p)
		t.Cleanup(func() { syscall.Kill(p, syscall.SIGKILL) })
	}
	var left []int
	for end := time.Now().Add(2 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		left = left[:0]
		for _, p := range ps {
			if running(p) {
				left = append(left, p)
			}
		}
		if len(left) == 0 || time.Now().After(end) {
			return left
		}
	}
}

// A wrapper script given as the haproxy binary (its name is not the
// master's comm) must not leave the master and its worker running; one
// that runs haproxy as its child, not by exec, is refused (the script's
// signals would reach the wrapper), leaving nothing running either.
func TestShWrapperCleanup(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	f, r := failedReloadResult(t)
	rp, err := repro.For(f, r)
	if err != nil {
		t.Fatal(err)
	}
	dir := writeScript(t, rp)
	bin := fakeBin(t)
	for _, c := range []struct {
		name, wrap, want string
	}{
		{"exec", "exec", "INCONCLUSIVE: cycle 1: haproxy -c accepts the config"}, // the fake accepts any config
		{"child", "", "started haproxy as a child"},
	} {
		fakes := t.TempDir()
		pids := filepath.Join(t.TempDir(), "pids")
		real := fakeHAProxy(t, fakes, pids)
		wrapper := writeExec(t, filepath.Join(fakes, "haproxy-wrapper"), "#!/bin/sh\n"+c.wrap+" "+shq(real)+` "$@"`+"\n")
		run := runScript(t, dir, []string{"PATH=" + bin + ":" + os.Getenv("PATH")}, 40*time.Second, wrapper)
		started := strings.Contains(run.stdout, "] haproxy started: master ")
		if run.code != repro.ExitInconclusive || (c.wrap == "exec" && !started) || !strings.Contains(run.stdout+run.stderr, c.want) {
			t.Errorf("%s: exit %d, want %d after the master started, saying %q\nstdout:\n%s\nstderr:\n%s", c.name, run.code, repro.ExitInconclusive, c.want, run.stdout, run.stderr)
		}
		if left := leftOver(t, pids); len(left) > 0 {
			t.Errorf("%s: the reproducer exited (%d) leaving pids %v running (master, worker)\nstdout:\n%s\nstderr:\n%s", c.name, run.code, left, run.stdout, run.stderr)
		}
	}
}

// A missing tool is named at once, not found out 20 s later as "master
// CLI listed no worker".
func TestShMissingTool(t *testing.T) {
	f, r := failedReloadResult(t)
	rp, err := repro.For(f, r)
	if err != nil {
		t.Fatal(err)
	}
	dir := writeScript(t, rp)
	// PATH: the fake socat, then every other program of the test's PATH but awk.
	bin := fakeBin(t)
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		entries, _ := os.ReadDir(d)
		for _, e := range entries {
			name := e.Name()
			if name == "awk" {
				continue
			}
			if _, err := os.Lstat(filepath.Join(bin, name)); err == nil {
				continue // an earlier PATH entry wins, as in a shell
			}
			os.Symlink(filepath.Join(d, name), filepath.Join(bin, name))
		}
	}
	pids := filepath.Join(t.TempDir(), "pids")
	fake := fakeHAProxy(t, t.TempDir(), pids)
	run := runScript(t, dir, []string{"PATH=" + bin}, 10*time.Second, fake)
	if _, err := os.Stat(pids); err == nil {
		leftOver(t, pids) // kills what it left, when the test ends
	}
	if run.code != repro.ExitInconclusive || !strings.Contains(run.stdout+run.stderr, "awk") || run.took > 5*time.Second {
		t.Errorf("exit %d after %s, want %d at once naming awk\nstdout:\n%s\nstderr:\n%s", run.code, run.took.Round(time.Millisecond), repro.ExitInconclusive, run.stdout, run.stderr)
	}
}

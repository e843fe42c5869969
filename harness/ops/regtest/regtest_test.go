package regtest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harp-project/harp/harness/core/fixcase"
)

func parse(t *testing.T, text string) fixcase.Case {
	t.Helper()
	c, err := fixcase.Parse("x/case-x.case", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

const head = "fix 0123456789ab\norder 1\ndoes d\nexpects e\nwhy w\n"

// Sections as case files give them (`section {` ... `}`).
const (
	tip   = "section {\nbackend tip\n    stick-table type ip size 1k expire 1h store gpc0\n}\n"
	mixed = "section {\nfrontend mixed\n    mode http\n    bind \"0.0.0.0:${PORT_mixed}\"\n    http-request track-sc0 int(97) table tint\n\nbackend tint\n    stick-table type integer size 1k expire 1h store gpc0\n}\n"
	peerP = "section {\npeers p\n    bind \"0.0.0.0:${PORT_p}\"\n    server harp\n}\n"
	web   = "section {\nfrontend web\n    bind \"0.0.0.0:${PORT_web}\"\n    http-request set-var(txn.m) req.hdr(host),map(/etc/harp/m.conf)\n}\n"
)

func TestExportStats(t *testing.T) {
	c := parse(t, head+"kind stats\nsend \"set table tip key 1.2.3.4 data.gpc0 1\\nshow table tip\\n\"\nthen show table tip\nthen-final\n"+tip+"want lacks \"Unknown\"\nwant then-lacks \"gpc0=2\"\n")
	tt, err := Export("upstream-fixes-cli", c)
	if err != nil {
		t.Fatal(err)
	}
	if tt.File != "cli/case_x.vtc" || tt.Check != "upstream-fixes-cli/case-x" {
		t.Errorf("file %s, check %s", tt.File, tt.Check)
	}
	for _, want := range []string{
		"varnishtest \"upstream-fixes-cli: d\"\n",
		"#REGTEST_TYPE=bug\n",
		"feature ignore_unknown_macro\n",
		"    backend tip\n        stick-table type ip", // the case's own section
		"haproxy h1 -W -S -conf {",                     // master-worker, as harp runs every node
		"} -start\n",
		"    send \"set table tip key 1.2.3.4 data.gpc0 1\\nshow table tip\"\n    expect !~ \"Unknown\"\n", // the line feed VTest adds is not sent twice
		"    send \"show table tip\"\n    expect !~ \"gpc0=2\"\n",                                          // the then term on the then exchange
		"    send \"show info\"\n    expect ~ \"Name: HAProxy\"\n",                                         // the control
	} {
		if !strings.Contains(tt.Text, want) {
			t.Errorf("missing %q in\n%s", want, tt.Text)
		}
	}
	for _, not := range []string{"tint", "peers"} {
		if strings.Contains(tt.Text, not) {
			t.Errorf("%q in\n%s", not, tt.Text)
		}
	}
}

func TestExportMasterAndLimits(t *testing.T) {
	c := parse(t, head+"since 2.8\nuntil 3.1\nneeds threads\nkind master\nsend \"@2 show info\\n\"\nwant lacks \"Pid:\"\n")
	tt, err := Export("upstream-fixes-master", c)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"feature cmd \"$HAPROXY_PROGRAM -cc 'version_atleast(2.8-dev0)'\"\n",
		"feature cmd \"$HAPROXY_PROGRAM -cc '!version_atleast(3.1-dev0)'\"\n",
		"feature cmd \"$HAPROXY_PROGRAM -cc 'feature(THREAD)'\"\n",
		"haproxy h1 -W -S -conf {",
		"haproxy h1 -mcli {\n    send \"@2 show info\"\n    expect !~ \"Pid:\"\n}",
	} {
		if !strings.Contains(tt.Text, want) {
			t.Errorf("missing %q in\n%s", want, tt.Text)
		}
	}
	if tt.File != "mcli/case_x.vtc" {
		t.Errorf("file %s", tt.File)
	}
}

func TestExportCheckAndExec(t *testing.T) {
	bad := parse(t, head+"kind check\nglobal \"    mworker-max-reloads -1\"\nwant not-starts-with \"exit 0\"\n")
	tt, err := Export("upstream-fixes-config", bad)
	if err != nil || !strings.Contains(tt.Text, "haproxy h1 -conf-BAD \"ALERT\" {\n    global\n") || !strings.Contains(tt.Text, "mworker-max-reloads -1") {
		t.Errorf("%v\n%s", err, tt.Text)
	}
	ok := parse(t, head+"kind check\nfrontend \"    http-request sc-add-gpc(0,4) int(1)\"\nwant starts-with \"exit 0\"\n")
	if tt, err = Export("upstream-fixes-config", ok); err != nil || !strings.Contains(tt.Text, `shell -match "\\A(?=exit 0)" {`) || strings.Contains(tt.Text, "-conf-OK") {
		t.Errorf("%v\n%s", err, tt.Text)
	}
	both := parse(t, head+"kind check\nfrontend \"    x\"\nwant not-starts-with \"exit 0\"\nwant lacks \"Expects sc-set-gpc(\"\n")
	tt, err = Export("upstream-fixes-config", both)
	if err != nil || !strings.Contains(tt.Text, `shell -match "\\A(?!exit 0)(?![\\s\\S]*?Expects sc-set-gpc\\()" {`+"\ncat >") {
		t.Errorf("%v\n%s", err, tt.Text)
	}
	// shell -match has no negation: one term is a lookahead too.
	lacks := parse(t, head+"kind check\nglobal \"    stats bind-process 1\"\nwant lacks \"'stats' is not supported\"\n")
	if tt, err = Export("upstream-fixes-config", lacks); err != nil || !strings.Contains(tt.Text, `shell -match "\\A(?![\\s\\S]*?'stats' is not supported)" {`) {
		t.Errorf("%v\n%s", err, tt.Text)
	}
	ex := parse(t, head+"kind exec\nargs -W -c -f {cfg}\nconfig {\nglobal\n    nbthread 1\n}\nwant once \"x y\"\n")
	tt, err = Export("upstream-fixes-master", ex)
	for _, want := range []string{
		"cat >\"${tmpdir}/case.cfg\" <<'HARP_CFG'\nglobal\n    nbthread 1\nHARP_CFG\n",              // not indented: the marker ends the here-document
		`out=$("$HAPROXY_PROGRAM" -W -c -f "${tmpdir}/case.cfg" 2>&1 </dev/null) || code=$?` + "\n", // sh -e: the status is kept
		`shell -match "\\A(?=[\\s\\S]*?x y)(?![\\s\\S]*?x y[\\s\\S]*?x y)" {`,
	} {
		if err != nil || !strings.Contains(tt.Text, want) {
			t.Errorf("%v: missing %q in\n%s", err, want, tt.Text)
		}
	}
	if tt.File != "startup/case_x.vtc" {
		t.Errorf("file %s", tt.File)
	}
}

func TestRefusals(t *testing.T) {
	for _, c := range []struct{ text, why string }{
		{"kind stats\nsend \"x\\n\"\nwant go\n", "Go code"},
		{"kind steps\nwant anything\n", "several exchanges"},
		{"kind stats\nsend \"x\\n\"\nkeep-open\nwant anything\n", "never ends its side"},
		{"kind stats\nsend \"x\\n\"\nabort\nwant anything\n", "without reading"},
		{"kind stats\nsend \"x\\n\"\nsilent\nwant anything\n", "no byte"},
		{"kind stats\nsend \"x\"\nwant anything\n", "without its line feed"},
		{"kind stats\nsend \"x\\x00\\n\"\nwant anything\n", "NUL"},
		{"kind stats\nsend \"x\\n\"\nport 9997/tcp\nwant anything\n", "user-level"},
		{"kind stats\nsend \"x\\n\"\nthen show table tip\nwant then-lacks \"a\"\n", "polled"},
		{"kind stats\nsend \"show peers p\\n\"\n" + peerP + "want anything\n", "peers section p"},
		{"kind stats\nsend \"show table web\\n\"\n" + web + "want anything\n", "file of harp's node"},
		{"kind peer\n" + peerP + "want anything\n", "peers client"},
	} {
		h := head
		if strings.Contains(c.text, "want go") {
			h = strings.TrimSuffix(head, "why w\n")
		}
		_, err := Export("upstream-fixes-cli", parse(t, h+c.text))
		if why := Reason(err); !strings.Contains(why, c.why) {
			t.Errorf("%q: refused for %q (%v), want %q", c.text, why, err, c.why)
		}
	}
}

func TestSectionsAreTheCases(t *testing.T) {
	c := parse(t, head+"kind stats\nsend \"show table tint\\n\"\n"+mixed+"want anything\n")
	got, err := sections(c.Sections)
	if err != nil {
		t.Fatal(err)
	}
	want := "\n    frontend mixed\n        mode http\n        bind \"fd@${mixed}\"\n        http-request track-sc0 int(97) table tint\n\n    backend tint\n        stick-table type integer size 1k expire 1h store gpc0\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if got, _ := sections(""); got != "" {
		t.Errorf("no section: %q", got)
	}
}

func TestExpect(t *testing.T) {
	for _, c := range []struct {
		terms  []fixcase.Term
		op, re string
	}{
		{[]fixcase.Term{{Op: "contains", Arg: "a.b"}}, "~", `a\.b`},
		{[]fixcase.Term{{Op: "lacks", Arg: "(x)"}}, "!~", `\(x\)`},
		{[]fixcase.Term{{Op: "starts-with", Arg: "exit 0"}}, "~", `\Aexit 0`},
		{[]fixcase.Term{{Op: "no-line", Arg: ">"}}, "!~", `(?m)^[ \t\r]*>[ \t\r]*$`},
		{[]fixcase.Term{{Op: "is", Arg: "ok\n"}, {Op: "lacks", Arg: "no"}}, "~", "\\A(?=ok\n\\z)(?![\\s\\S]*?no)"},
	} {
		op, re := expect(c.terms)
		if op != c.op || re != c.re {
			t.Errorf("%v: %s %q, want %s %q", c.terms, op, re, c.op, c.re)
		}
	}
}

func TestQuoteAndProse(t *testing.T) {
	if got := quote("a\"b\\c\n\r\t\x01"); got != `"a\"b\\c\n\r\t\x01"` {
		t.Errorf("quote: %s", got)
	}
	if got := prose("unless ${HAPROXY_LOCALPEER} is x"); got != "unless $HAPROXY_LOCALPEER is x" {
		t.Errorf("prose: %s", got)
	}
}

// Results reads what both runners print, captured from real runs on
// Debian's 2.6.12: VTest2 (11ee910) and varnishtest 7.1.1.
func TestResultsOfBothRunners(t *testing.T) {
	for _, f := range []string{"testdata/vtest2-2.6.12.txt", "testdata/varnishtest-7.1.1-2.6.12.txt"} {
		out, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		got := Results(string(out))
		want := map[string]Outcome{
			"cli_empty_line_ignored.vtc":               {Failed, `CLI expect failed !~ "Unknown command"`},
			"cli_anon_global_key.vtc":                  {Result: Skipped},
			"cfg_check_with_daemon_reports_errors.vtc": {Result: Passed},
			"bad.vtc": {Error, "Unknown haproxy argument: -frobnicate"}, // the runner refused it: not HAProxy's answer
		}
		if len(got) != len(want) {
			t.Errorf("%s: %v", f, got)
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s: %s is %+v, want %+v", f, k, got[k], v)
			}
		}
	}
	// A test the runner killed at its 10 s: no answer, never a failure of
	// HAProxy's (lines from a real run of 3.4.7's master CLI).
	killed := "*    top   TEST mcli_x.vtc starting\n**   h1    === expect !~ \"Pid:\"\n#    top  TEST mcli_x.vtc TIMED OUT (kill -9)\n#    top  TEST mcli_x.vtc FAILED (10.013) signal=9\n"
	if got := Results(killed)["mcli_x.vtc"]; got.Result != Error || !strings.Contains(got.Why, "10 s") {
		t.Errorf("timed out: %+v", got)
	}
	// A worker that died on a signal is HAProxy's answer, whatever the
	// runner tripped over after it; VTest's SIGINT at the end is not.
	died := "*    top   TEST c.vtc starting\n***  h1    debug|[ALERT]    (7) : Current worker (9) exited with code 139 (Segmentation fault)\n---- h1    CLI failed to open 127.0.0.1:1\n#    top  TEST c.vtc FAILED (0.3) exit=2\n"
	if got := Results(died)["c.vtc"]; got.Result != Failed || !strings.Contains(got.Why, "139 (Segmentation fault)") {
		t.Errorf("crash: %+v", got)
	}
	stopped := strings.Replace(died, "139 (Segmentation fault)", "130 (Interrupt)", 1)
	if got := Results(stopped)["c.vtc"]; got.Result != Error {
		t.Errorf("VTest's own stop is no crash: %+v", got)
	}
	// The master itself died on SIGSEGV (3.5-dev5's recovery mode, the
	// finding mworker-recovery-master-crash): the runner read an EOF or a
	// missing answer first, and names the signal when it stops h1. Both
	// runners' real output.
	for _, f := range []string{"varnishtest-7.1.1-master-crash.txt", "vtest2-master-crash.txt"} {
		out, err := os.ReadFile(filepath.Join("testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		if got := Results(string(out))["mcli_recovery_mode_cli.vtc"]; got.Result != Failed || got.Why != "a process died: Bad exit status: 0x000b exit 0x0 signal 11 core 0" {
			t.Errorf("%s: %+v", f, got)
		}
	}
	sigterm := "*    top   TEST t.vtc starting\n---- h1    CLI rx timeout (fd: 6 0.000s ret: 0)\n---- h1    Bad exit status: 0x000f exit 0x0 signal 15 core 0\n#    top  TEST t.vtc FAILED (0.1) exit=2\n"
	if got := Results(sigterm)["t.vtc"]; got.Result != Error {
		t.Errorf("a SIGTERM is the runner's stop, no crash: %+v", got)
	}
	if got := Results("harp: the container could not start\n"); len(got) != 0 {
		t.Errorf("no summary line, no result: %v", got)
	}
}

func TestManifestExpectations(t *testing.T) {
	e := Entry{}
	e.Record(Validation{Build: "deb:bookworm", Version: "2.6.12-1+deb12u4", Result: Failed, Harp: "REPRODUCED", Agrees: true})
	e.Record(Validation{Build: "deb:experimental", Version: "3.4.7-1", Result: Passed, Harp: "REPRODUCED", Agrees: false})
	e.Record(Validation{Build: "deb:bookworm", Version: "2.6.12-1+deb12u4", Result: Passed, Harp: "PASS", Agrees: true})
	if len(e.Validations) != 2 || e.Expect("deb:bookworm", "2.6.12-1+deb12u4") != Passed || e.Expect("deb:other", "2.6.12-1+deb12u4") != Passed {
		t.Errorf("the newest validation of a build replaces the older: %+v", e.Validations)
	}
	if e.Expect("deb:experimental", "3.4.7-1") != "" {
		t.Error("a validation that disagrees with harp sets no expectation")
	}
	// A patched build says the version of the commit it patches: its own
	// validation decides, not the unpatched one's.
	e.Record(Validation{Build: "git:/h@HEAD", Version: "3.5-dev5", Result: Failed, Harp: "REPRODUCED", Agrees: true})
	e.Record(Validation{Build: "git:/h@HEAD,patch=fix.diff", Version: "3.5-dev5", Result: Passed, Harp: "PASS", Agrees: true})
	if e.Expect("git:/h@HEAD,patch=fix.diff", "3.5-dev5") != Passed || e.Expect("git:/h@HEAD", "3.5-dev5") != Failed {
		t.Errorf("patched builds: %+v", e.Validations)
	}
	if !Agrees(Failed, "REPRODUCED") || !Agrees(Skipped, "N/A") || Agrees(Passed, "REPRODUCED") || Agrees(Failed, "not run") {
		t.Error("Agrees")
	}
}

func TestSameRunIgnoresWords(t *testing.T) {
	a := "varnishtest \"x: to 8081\"\n\n# does: to 8081\n#REGTEST_TYPE=bug\nhaproxy h1 -conf {\n} -start\n"
	b := "varnishtest \"x: to frontend untracked\"\n\n# does: to frontend\n# untracked\n#REGTEST_TYPE=bug\nhaproxy h1 -conf {\n} -start\n"
	if !SameRun(a, b) {
		t.Error("a title and comments are words, not the run")
	}
	for _, c := range []string{strings.Replace(b, "-start", "-wait", 1), strings.Replace(b, "#REGTEST_TYPE=bug", "#REGTEST_TYPE=slow", 1)} {
		if SameRun(a, c) {
			t.Errorf("%q runs otherwise", c)
		}
	}
}

func TestCheckIDs(t *testing.T) {
	if s, ids := CheckIDs("upstream-fixes-cli/cli-x"); s != "upstream-fixes-cli" || len(ids) != 1 || ids[0] != "cli-x" {
		t.Errorf("%s %v", s, ids)
	}
	if s, ids := CheckIDs("conf-failed-reload/{master-survives,failed-reload-counted}.syntax-error"); s != "conf-failed-reload" ||
		strings.Join(ids, " ") != "master-survives.syntax-error failed-reload-counted.syntax-error" {
		t.Errorf("%s %v", s, ids)
	}
}

func TestAgreesOnTheTestsScope(t *testing.T) {
	text := "feature ignore_unknown_macro\nfeature cmd \"$HAPROXY_PROGRAM -cc 'version_atleast(3.0-dev0)'\"\n"
	if Limit(text) != "3.0-dev0" || Limit("feature cmd \"$HAPROXY_PROGRAM -cc '!version_atleast(3.1-dev0)'\"\n") != "" {
		t.Errorf("limit %q", Limit(text))
	}
	for _, c := range []struct {
		r        Result
		harp, v  string
		text     string
		expected bool
	}{
		{Skipped, "PASS", "2.6.12-1+deb12u4", text, true}, // before the test's limit: its scope
		{Skipped, "PASS", "3.2.26-1", text, false},        // after it, a skip where harp decided is not
		{Skipped, "REPRODUCED", "2.6.12-1", "", false},    // no limit: as Agrees
		{Failed, "PASS", "2.6.12-1", text, false},         // a result is always compared
		{Passed, "PASS", "3.5-dev5-50872daa6", text, true},
	} {
		if got := AgreesOn(c.r, c.harp, c.v, c.text); got != c.expected {
			t.Errorf("%v %s %s: %v", c.r, c.harp, c.v, got)
		}
	}
}

package history

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harp-project/harp/harness/core/verdict"
	"github.com/harp-project/harp/harness/ops/findings"
	"github.com/harp-project/harp/harness/ops/history/testrepo"
	"github.com/harp-project/harp/harness/ops/report"
)

func TestReadJudgements(t *testing.T) {
	good := "# comment\n" +
		"a889413f5ec5\tyes\tset maxconn frontend hangs the CLI\tconf-runtime-limits\t2.9\tset maxconn frontend under load\n" +
		"0a012aa16b77\tno\tneeds wait mode memory accounting\t-\n"
	js, err := ReadJudgements(strings.NewReader(good))
	if err != nil {
		t.Fatal(err)
	}
	if j := js["a889413f5ec5"]; !j.Observable || j.Catch != "conf-runtime-limits" || j.Introduced != "2.9" || !j.Caught() {
		t.Errorf("observable judgement: %+v", j)
	}
	if j := js["0a012aa16b77"]; j.Observable || j.Caught() {
		t.Errorf("unobservable judgement: %+v", j)
	}
	for _, bad := range []string{
		"a889413f5ec5\tmaybe\twhy\t-\n",                    // neither yes nor no
		"zz89413f5ec5\tyes\twhy\t-\n",                      // no commit id
		"a889413f5ec5\tyes\twhy\n",                         // too few fields
		"a889413f5ec5\tno\tx\t-\na889413f5ec5\tno\ty\t-\n", // twice
	} {
		if _, err := ReadJudgements(strings.NewReader(bad)); err == nil || !strings.Contains(err.Error(), "line ") {
			t.Errorf("%q: error %v, want one naming the line", bad, err)
		}
	}
	if (Judgement{Catch: "new:show-table-filter"}).Caught() {
		t.Error("a proposal counts as a check")
	}
}

func TestSeverity(t *testing.T) {
	for s, want := range map[string]string{
		"BUG/MEDIUM: peers: x": "MEDIUM", "BUG/MINOR: cli: y": "MINOR", "BUG/MAJOR: z": "MAJOR",
		"BUG/BUILD: w": "UNKNOWN", "MINOR: peers: feature": "", "MEDIUM: BUG/MINOR quoted": "",
	} {
		if got := Severity(s); got != want {
			t.Errorf("Severity(%q) = %q, want %q", s, got, want)
		}
	}
}

func TestStatus(t *testing.T) {
	// tally reads "RRP": one trial a letter (R, P, I, E).
	tally := func(s string) Tally {
		var t Tally
		for _, c := range s {
			t.add(map[rune]verdict.Verdict{'R': verdict.Reproduced, 'P': verdict.Pass, 'I': verdict.Inconclusive, 'E': verdict.Error}[c])
		}
		return t
	}
	for _, c := range []struct {
		bad, fixed string
		want       Status
	}{
		{"R", "P", Caught}, {"P", "P", Missed}, {"P", "R", Missed}, {"R", "R", NotCleared},
		{"I", "P", Inconclusive}, {"R", "I", Inconclusive}, {"", "P", NotRun}, {"R", "", NotRun},
		// Three trials: a majority on the bad build, every one on the fixed.
		{"RRR", "PPP", Caught}, {"RRP", "PPP", Caught}, {"RPP", "PPP", Flaky}, {"RRI", "PPP", Caught},
		{"RRR", "PPR", Flaky}, {"RRR", "PPI", Inconclusive}, {"PPP", "PPP", Missed}, {"RRR", "RRR", NotCleared},
		{"RII", "PPP", Inconclusive}, {"RRP", "RRR", NotCleared},
	} {
		if got := status(tally(c.bad), tally(c.fixed)); got != c.want {
			t.Errorf("status(%q, %q) = %s, want %s", c.bad, c.fixed, got, c.want)
		}
	}
	for s, want := range map[string]string{"": "", "R": "REPRODUCED", "P": "PASS", "RRR": "REPRODUCED 3/3", "RPR": "REPRODUCED 2/3, PASS 1/3", "PIE": "PASS 1/3, INCONCLUSIVE 1/3, ERROR 1/3"} {
		if got := tally(s).String(); got != want {
			t.Errorf("%q shows %q, want %q", s, got, want)
		}
	}
}

// result is a cell of a tag matrix as summary.json holds it.
func result(suite, tag string, v verdict.Verdict, checks ...verdict.Tally) report.Result {
	return report.Result{Suite: suite, Verdict: v, Checks: checks,
		Origin: "git /tmp/haproxy commit 0123456789abcdef (" + tag + "): BUG/MEDIUM: something"}
}

func TestMake(t *testing.T) {
	fixes := []Fix{
		{Commit: "a889413f5ec5e2c0", Subject: "BUG/MEDIUM: cli: Deadlock when setting frontend maxconn", Bad: "v3.0.0", Fixed: "v3.1.0"},
		{Commit: "1111111111111111", Subject: "BUG/MINOR: cli: check one", Bad: "v3.0.0", Fixed: "v3.1.0"},
		{Commit: "2222222222222222", Subject: "BUG/MINOR: cli: check two", Bad: "v3.0.0", Fixed: "v3.1.0"},
		{Commit: "3333333333333333", Subject: "BUG/MINOR: peers: no check", Bad: "v3.0.0", Fixed: "v3.1.0"},
		{Commit: "4444444444444444", Subject: "BUG/MINOR: peers: unobservable", Bad: "v3.0.0", Fixed: "v3.1.0"},
		{Commit: "5555555555555555", Subject: "BUG/MINOR: peers: unjudged", Bad: "v3.0.0", Fixed: "v3.1.0"},
		{Commit: "6666666666666666", Subject: "BUG/MINOR: cli: never run", Bad: "v2.6.0", Fixed: "v2.7.0"},
		{Commit: "7777777777777777", Subject: "BUG/MINOR: cli: retired check", Bad: "v3.0.0", Fixed: "v3.1.0"},
	}
	js := map[string]Judgement{
		"7777777":      {Observable: true, Catch: "retired:cli-something (held on the bad build: needs ASan)"},
		"a889413f5ec5": {Observable: true, Catch: "conf-runtime-limits"},
		"1111111111":   {Observable: true, Catch: "conf-cli-permissions/user.add-map.level-enforced"},
		"2222222":      {Observable: true, Catch: "conf-cli-permissions/user.set-table.refusal-changes-nothing"},
		"3333333":      {Observable: true, Catch: "new:peers-something"},
		"4444444":      {Observable: false, Catch: "-"},
		"6666666":      {Observable: true, Catch: "conf-cli-permissions/user.add-map.level-enforced"},
	}
	add := verdict.Tally{ID: "user.add-map.level-enforced"}
	set := verdict.Tally{ID: "user.set-table.refusal-changes-nothing"}
	addF, setF := add, set
	addF.Failed, addF.Example = 1, "accepted"
	setF.Failed = 1
	add.Held, set.Held = 2, 2
	runs := []findings.Scanned{{Dir: "m1", Run: report.Run{Results: []report.Result{
		result("conf-runtime-limits", "v3.0.0", verdict.Reproduced),
		result("conf-runtime-limits", "v3.1.0", verdict.Pass),
		// One cell, two checks: each fix is judged by its own.
		result("conf-cli-permissions", "v3.0.0", verdict.Reproduced, addF, set),
		result("conf-cli-permissions", "v3.1.0", verdict.Reproduced, add, setF),
		// A Debian build is no release tag, whatever it shows.
		{Suite: "conf-runtime-limits", Verdict: verdict.Pass, Origin: "Debian trixie haproxy 3.0.11-1"},
	}}}}
	b := Make(fixes, js, runs)
	// A whole suite's verdict is no catch: any of its violations reads the
	// same (suite only).
	want := []Status{SuiteOnly, Caught, Missed, NoCheck, Unobservable, Unjudged, NotRun, Missed}
	for i, r := range b.Rows {
		if r.Status != want[i] {
			t.Errorf("%s: %s (bad %q, fixed %q), want %s", r.Subject, r.Status, r.OnBad, r.OnFixed, want[i])
		}
	}
	if b.Observable != 6 || b.Counts[Caught] != 1 || b.Counts[SuiteOnly] != 1 || b.Counts[Missed] != 2 {
		t.Errorf("observable %d, caught %d, suite only %d, missed %d; want 6, 1, 1, 2", b.Observable, b.Counts[Caught], b.Counts[SuiteOnly], b.Counts[Missed])
	}
	md := b.Markdown("harp history --repo CLONE")
	for _, s := range []string{"Caught: 1 of 6 observable fixes", "| missed | 2 |", "| `a889413f5ec5` | BUG/MEDIUM: cli: Deadlock", "| caught | 1 |", "| suite only | 1 |", "| REPRODUCED | PASS | – | suite only |"} {
		if !strings.Contains(md, s) {
			t.Errorf("markdown lacks %q:\n%s", s, md)
		}
	}
}

func TestTagOf(t *testing.T) {
	for origin, want := range map[string]string{
		"git /h commit 0a1b (v3.0.0): BUG/x":            "v3.0.0",
		"git /h commit 0a1b (v3.1-dev3-12-gabc): MINOR": "",
		"git /h commit 0a1b (v3.0.1): BUG/x":            "", // a stable release is no .0
		"Debian trixie 3.0.11-1":                        "",
	} {
		if got := TagOf(report.Result{Origin: origin}); got != want {
			t.Errorf("TagOf(%q) = %q, want %q", origin, got, want)
		}
	}
}

// TestCollect builds a small history: fixes before and after a release,
// one that touches no tracked file, one to haproxy.c off the reload path.
func TestCollect(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	commit := func(file, subject string) {
		t.Helper()
		p := filepath.Join(dir, file)
		os.MkdirAll(filepath.Dir(p), 0o755)
		f, _ := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		f.WriteString(subject + "\n")
		f.Close()
		git("add", "-A")
		git("commit", "-q", "-m", subject)
	}
	git("init", "-q")
	commit("src/peers.c", "MINOR: first")
	git("tag", "v2.6.0")
	commit("src/peers.c", "BUG/MEDIUM: peers: fixed in 2.7")
	commit("src/haproxy.c", "BUG/MINOR: haproxy: option parsing")
	commit("src/haproxy.c", "BUG/MINOR: mworker: reload leaks an fd")
	commit("src/ssl_sock.c", "BUG/MAJOR: ssl: elsewhere")
	git("tag", "v2.7-dev1")
	commit("src/cli.c", "MINOR: cli: a feature")
	git("tag", "v2.7.0")
	commit("src/stick_table.c", "BUG/MINOR: stick-table: after the last release")
	rev := func(ref string) string {
		out, err := exec.Command("git", "-C", dir, "rev-parse", ref).Output()
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(out))
	}
	feature, first := rev("v2.7.0"), rev("v2.6.0")
	os.WriteFile(filepath.Join(dir, "src/cli.c"), []byte("named\n"), 0o644)
	git("add", "-A")
	// An id of digits alone reads as a number: the message names each
	// commit by its shortest prefix of n or more with a letter in it.
	prefix := func(id string, n int) string {
		for ; !strings.ContainsAny(id[:n], "abcdef") && n < len(id); n++ {
		}
		return id[:n]
	}
	git("commit", "-q", "-m", "BUG/MINOR: cli: names its cause", "-m", "Since commit "+prefix(feature, 9)+" (and 1234567 is a number, deadbeef0 no commit); the same bug as "+prefix(first, 12)+".")
	fixes, err := Collect(context.Background(), dir, "v2.6.0", "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range fixes {
		got = append(got, f.Subject+" "+f.FirstTag+" "+f.Bad+"->"+f.Fixed)
	}
	want := []string{
		"BUG/MEDIUM: peers: fixed in 2.7 v2.7-dev1 v2.6.0->v2.7.0",
		"BUG/MINOR: mworker: reload leaks an fd v2.7-dev1 v2.6.0->v2.7.0",
		"BUG/MINOR: stick-table: after the last release  v2.7.0->",
		"BUG/MINOR: cli: names its cause  v2.7.0->",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("fixes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	names := fixes[len(fixes)-1].Names
	if len(names) != 2 || names[0] != (Named{Commit: feature[:12], Tag: "v2.7.0", After: true}) || names[1] != (Named{Commit: first[:12], Tag: "v2.6.0", After: false}) {
		t.Errorf("names: %+v; want %s (v2.7.0, after v2.6.0) and %s (v2.6.0, not after)", names, feature[:12], first[:12])
	}
	if _, err := Collect(context.Background(), dir, "v2.7-dev1", "HEAD"); err == nil {
		t.Error("a dev tag as --since was taken")
	}
	if _, err := Collect(context.Background(), dir, "v2.6.0", "nosuch"); err == nil {
		t.Error("a missing head was taken")
	}
}

// A bug a dev cycle brought and fixed: the releases pass on both sides,
// the fix's parent and the fix itself decide.
func TestMakeAtCommit(t *testing.T) {
	at := func(commit string, v verdict.Verdict) report.Result {
		x := verdict.Tally{ID: "x", Held: 1}
		if v == verdict.Reproduced {
			x = verdict.Tally{ID: "x", Failed: 1, Example: "x failed"}
		}
		return report.Result{Suite: "upstream-fixes", Verdict: v, Origin: "git /tmp/haproxy commit " + commit + " (v3.1-dev10-103-gd1c6d4497): BUG/MINOR: x", Checks: []verdict.Tally{x}}
	}
	fixes := []Fix{
		{Commit: "d1c6d44976d4aaaa", Parent: "f0f03b98f773bbbb", Subject: "BUG/MINOR: startup: dev-only", Bad: "v3.0.0", Fixed: "v3.1.0"},
		{Commit: "7777777777777777", Parent: "8888888888888888", Subject: "BUG/MINOR: cli: no pair run", Bad: "v3.0.0", Fixed: "v3.1.0"},
		{Commit: "9999999999999999", Parent: "aaaaaaaaaaaaaaaa", Subject: "BUG/MINOR: cli: pair passes", Bad: "v3.0.0", Fixed: "v3.1.0"},
		{Commit: "bbbbbbbbbbbbbbbb", Parent: "cccccccccccccccc", Subject: "BUG/MINOR: cli: came in later", Bad: "v3.0.0", Fixed: "v3.1.0"},
	}
	js := map[string]Judgement{
		"d1c6d44976d4": {Observable: true, Catch: "upstream-fixes/x"},
		"777777777777": {Observable: true, Catch: "upstream-fixes/x"},
		"999999999999": {Observable: true, Catch: "conf-runtime-limits"},
		// Its bug came in after v3.0.0: v3.0.0's violation (another bug's)
		// is no catch of it, and no pair was run.
		"bbbbbbbbbbbb": {Observable: true, Catch: "later/x", Introduced: "commit 123456789abc (v3.1-dev2)"},
	}
	runs := []findings.Scanned{{Dir: "m", Run: report.Run{Results: []report.Result{
		result("upstream-fixes", "v3.0.0", verdict.Pass, verdict.Tally{ID: "x", Held: 1}),
		result("upstream-fixes", "v3.1.0", verdict.Pass, verdict.Tally{ID: "x", Held: 1}),
		at("f0f03b98f773", verdict.Reproduced), // abbreviated ids match
		at("d1c6d44976d4aaaa", verdict.Pass),
		{Suite: "conf-runtime-limits", Verdict: verdict.Pass, Origin: "git /tmp/haproxy commit aaaaaaaaaaaa (v3.1-dev1): x"},
		{Suite: "conf-runtime-limits", Verdict: verdict.Pass, Origin: "git /tmp/haproxy commit 999999999999 (v3.1-dev1): x"},
		result("later", "v3.0.0", verdict.Reproduced, verdict.Tally{ID: "x", Failed: 1, Example: "x failed"}),
		result("later", "v3.1.0", verdict.Pass, verdict.Tally{ID: "x", Held: 1}),
	}}}}
	b := Make(fixes, js, runs)
	want := []struct {
		st Status
		at bool
	}{{Caught, true}, {Missed, false}, {Missed, true}, {NotRun, false}}
	for i, r := range b.Rows {
		if r.Status != want[i].st || r.AtCommit != want[i].at {
			t.Errorf("%s: %s at commit %v (parent %q, fix %q), want %s at commit %v", r.Subject, r.Status, r.AtCommit, r.OnParent, r.OnCommit, want[i].st, want[i].at)
		}
	}
	md := b.Markdown("harp history")
	for _, s := range []string{"1 of them on the fix's parent and the fix itself", "| REPRODUCED → PASS | caught (at the commit) |"} {
		if !strings.Contains(md, s) {
			t.Errorf("markdown lacks %q", s)
		}
	}
}

// A fix caught by a check of a suite split from another (report.SplitFrom)
// is judged by runs recorded before the split, under the old suite.
func TestMakeReadsRunsFromBeforeASplit(t *testing.T) {
	fixes := []Fix{{Commit: "d3f92894471daaaa", Subject: "BUG/MINOR: cli: too many args", Bad: "v2.9.0", Fixed: "v3.0.0"}}
	js := map[string]Judgement{"d3f92894471d": {Observable: true, Catch: "upstream-fixes-cli/cli-too-many-args-refused"}}
	runs := []findings.Scanned{{Dir: "m", Run: report.Run{Results: []report.Result{
		result("upstream-fixes", "v2.9.0", verdict.Reproduced, verdict.Tally{ID: "cli-too-many-args-refused", Failed: 1, Example: "ran"}),
		result("upstream-fixes", "v3.0.0", verdict.Pass, verdict.Tally{ID: "cli-too-many-args-refused", Held: 1}),
	}}}}
	if r := Make(fixes, js, runs).Rows[0]; r.Status != Caught || r.OnBad != "REPRODUCED" || r.OnFixed != "PASS" {
		t.Errorf("%+v", r)
	}
}

// A --head older than --since, off its line, or equal to it made an
// empty board, written over docs/upstream-bugs.md with exit 0: each is
// an error naming both.
func TestCollectRefusesAnEmptyOrBackwardRange(t *testing.T) {
	dir, git, commit := testrepo.New(t)
	commit("src/peers.c", "MINOR: first")
	git("tag", "v2.6.0")
	git("branch", "side")
	commit("src/peers.c", "BUG/MEDIUM: peers: fixed in 2.7")
	git("tag", "v2.7.0")
	git("checkout", "-q", "side")
	commit("src/cli.c", "BUG/MINOR: cli: on a side line")
	for _, c := range []struct{ since, head, want string }{
		{"v2.7.0", "v2.6.0", "not a descendant"},
		{"v2.7.0", "side", "not a descendant"},
		{"v2.7.0", "v2.7.0", "no commit"},
	} {
		_, err := Collect(context.Background(), dir, c.since, c.head)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.since) || !strings.Contains(err.Error(), c.head) {
			t.Errorf("--since %s --head %s: %v, want an error naming both: %q", c.since, c.head, err, c.want)
		}
	}
	if fixes, err := Collect(context.Background(), dir, "v2.6.0", "v2.7.0"); err != nil || len(fixes) != 1 {
		t.Errorf("v2.6.0..v2.7.0: %v %v", fixes, err)
	}
}

// Runs given with --reports that fill no column are named, with why: no
// suite a judgement names a check of, or no build any fix's columns read.
func TestMakeSaysWhichRunsWereNotUsed(t *testing.T) {
	fixes := []Fix{{Commit: "d3f92894471daaaa", Parent: "0000000000001111", Subject: "BUG/MINOR: cli: too many args", Bad: "v2.9.0", Fixed: "v3.0.0"}}
	js := map[string]Judgement{"d3f92894471d": {Observable: true, Catch: "upstream-fixes-cli/cli-too-many-args-refused"}}
	tally := verdict.Tally{ID: "cli-too-many-args-refused", Held: 1}
	runs := []findings.Scanned{
		{Dir: "reports/used", Run: report.Run{Results: []report.Result{result("upstream-fixes-cli", "v2.9.0", verdict.Pass, tally)}}},
		{Dir: "reports/other-suite", Run: report.Run{Results: []report.Result{result("conf-runtime-limits", "v2.9.0", verdict.Pass)}}},
		{Dir: "reports/other-build", Run: report.Run{Results: []report.Result{result("upstream-fixes", "v3.2.0", verdict.Pass, tally)}}},
		{Dir: "reports/empty"},
	}
	b := Make(fixes, js, runs)
	want := map[string]string{
		"reports/other-suite": "conf-runtime-limits",
		"reports/other-build": "v3.2.0",
		"reports/empty":       "no results",
	}
	got := map[string]string{}
	for _, u := range b.Unused {
		got[u.Dir] = u.Why
	}
	for dir, w := range want {
		if !strings.Contains(got[dir], w) {
			t.Errorf("%s: not used because %q, want a reason naming %q", dir, got[dir], w)
		}
	}
	if len(got) != len(want) || len(b.Runs) != 1 || b.Runs[0] != "reports/used" {
		t.Errorf("unused %v, used %v; want 3 unused, reports/used used", got, b.Runs)
	}
	md := b.Markdown("harp history")
	if !strings.Contains(md, "reports/other-build") || !strings.Contains(md, "not used") {
		t.Errorf("the board does not say which runs were not used:\n%s", md)
	}
}

// The doc says which harp made the runs it used: one commit is a rerun of
// one harp's code; several, or runs that record none, are not.
func TestMakers(t *testing.T) {
	for _, c := range []struct {
		harps []string
		want  string
	}{
		{[]string{"harp (devel) (commit 4295f51a1b2c, go1.26.8)", "harp (devel) (commit 4295f51a1b2c, go1.26.8)"}, "2 runs of one harp commit, 4295f51a1b2c"},
		{[]string{"harp (devel) (commit 4295f51a1b2c, go1.26.8)", "harp (devel) (commit c787f95dbafd+changes, go1.26.8)", "harp (devel) (commit unknown, go1.26.8)", ""},
			"4 runs of 2 harp commits (not one rerun of one harp's code); 2 record no harp commit; 1 made from a tree with uncommitted changes"},
	} {
		var m Makers
		for _, h := range c.harps {
			m.add(h)
		}
		if got := m.String(); got != c.want {
			t.Errorf("%q:\n got %s\nwant %s", c.harps, got, c.want)
		}
	}
}

// A scoreboard run with --fixes judges only the fixes picked: a fix whose
// release cells a shared unit filled as a by-product (and whose commit
// pair nobody ran) is "not run", never missed or caught; a retired
// check's miss is the judgement's and stays.
func TestOnlyThePickedFixesAreJudged(t *testing.T) {
	fixes := []Fix{
		{Commit: "598c7f164c110000", Parent: "1", Subject: "BUG/MINOR: cli: picked", Bad: "v2.9.0", Fixed: "v3.0.0"},
		{Commit: "70251a2aeb590000", Parent: "2", Subject: "BUG/MINOR: cli: beside it", Bad: "v2.9.0", Fixed: "v3.0.0"},
		{Commit: "6219a58d28500000", Parent: "3", Subject: "BUG/MINOR: cli: caught beside it", Bad: "v2.9.0", Fixed: "v3.0.0"},
		{Commit: "7777777777777777", Parent: "4", Subject: "BUG/MINOR: cli: retired", Bad: "v2.9.0", Fixed: "v3.0.0"},
	}
	js := map[string]Judgement{
		"598c7f164c11": {Observable: true, Catch: "upstream-fixes-cli/picked"},
		"70251a2aeb59": {Observable: true, Catch: "upstream-fixes-cli/beside"},
		"6219a58d2850": {Observable: true, Catch: "upstream-fixes-cli/caught"},
		"777777777777": {Observable: true, Catch: "retired:upstream-fixes-cli/old (held on the bad build)"},
	}
	held := func(id string) verdict.Tally { return verdict.Tally{ID: id, Held: 1} }
	broke := func(id string) verdict.Tally { return verdict.Tally{ID: id, Failed: 1} }
	runs := []findings.Scanned{{Dir: "r", Run: report.Run{Results: []report.Result{
		result("upstream-fixes-cli", "v2.9.0", verdict.Reproduced, broke("picked"), held("beside"), broke("caught")),
		result("upstream-fixes-cli", "v3.0.0", verdict.Pass, held("picked"), held("beside"), held("caught")),
	}}}}
	b := Make(fixes, js, runs)
	if b.Counts[Missed] != 2 || b.Counts[Caught] != 2 {
		t.Fatalf("before Only: %v", b.Counts)
	}
	b.Only(func(f Fix) bool { return f.Short() == "598c7f164c11" })
	want := map[string]Status{"598c7f164c11": Caught, "70251a2aeb59": NotRun, "6219a58d2850": NotRun, "777777777777": Missed}
	for _, r := range b.Rows {
		if r.Status != want[r.Short()] {
			t.Errorf("%s: %s, want %s", r.Short(), r.Status, want[r.Short()])
		}
		if r.Status == NotRun && (r.OnBad != "" || r.OnFixed != "") {
			t.Errorf("%s: not run, yet cells %q %q", r.Short(), r.OnBad, r.OnFixed)
		}
	}
	if b.Counts[Caught] != 1 || b.Counts[Missed] != 1 || b.Counts[NotRun] != 2 {
		t.Errorf("counts after Only: %v", b.Counts)
	}
}

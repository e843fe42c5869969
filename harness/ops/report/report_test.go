package report

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/harp-project/harp/harness/core/record"
	"github.com/harp-project/harp/harness/core/verdict"
)

func TestLine(t *testing.T) {
	r := Result{Suite: "3517", Name: "3.4.7-1", Verdict: verdict.Reproduced, Reason: "first/marker lost in 3 of 3 reloads"}
	if got := r.Line(); got != "#3517 on 3.4.7-1: REPRODUCED (first/marker lost in 3 of 3 reloads)" {
		t.Errorf("Line() = %q", got)
	}
}

func TestTrimFoldsPolls(t *testing.T) {
	ex := []record.Exchange{
		{Target: "master", Command: "show proc"},
		{Target: "worker 8", Command: "@!8 show peers", Output: "first"},
		{Target: "worker 8", Command: "@!8 show peers", Output: "last"},
		{Target: "worker 8", Command: "@!8 show table first/marker"},
	}
	got := Trim(ex)
	if len(got) != 2 || got[0].Output != "last" {
		t.Errorf("Trim = %+v", got)
	}
}

func TestWrite(t *testing.T) {
	root := t.TempDir()
	run := Run{ID: "r1", Started: time.Now(), Command: "harp run", Results: []Result{{
		Suite: "3517", Upstream: "haproxy/haproxy#3517", Build: "deb:trixie", Name: "3.0.11-1+deb13u4", Version: "3.0.11-1+deb13u4",
		Verdict: verdict.Reproduced, TrialsRun: 3, TrialsViolated: 3, Reason: "first/marker lost in 3 of 3 reloads",
		Noun: "reloads", Config: "global\n", VV: "HAProxy version 3.0.11-1+deb13u4",
		Trials: []verdict.Trial{{N: 1, Violation: "first/marker lost", Notes: []string{"new worker 12 listed"}}},
	}}}
	dir, err := Write(root, run)
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Results []map[string]any `json:"results"`
	}
	data, _ := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err := json.Unmarshal(data, &back); err != nil || len(back.Results) != 1 {
		t.Fatalf("summary.json: %v %s", err, data)
	}
	for _, k := range []string{"suite", "upstream_issue", "build_spec", "haproxy_version", "verdict", "trials_run", "trials_violated", "reason", "duration_s"} {
		if _, ok := back.Results[0][k]; !ok {
			t.Errorf("summary.json record lacks %q", k)
		}
	}
	md, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	for _, want := range []string{"REPRODUCED", "reload 1: VIOLATED: first/marker lost", "haproxy -vv", "new worker 12 listed"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	if target, err := os.Readlink(filepath.Join(root, "latest")); err != nil || target != "r1" {
		t.Errorf("latest -> %q, %v", target, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "01-3517-3.0.11-1+deb13u4", "trials.json")); err != nil {
		t.Error(err)
	}
}

func sampleRun(id string) Run {
	at := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	return Run{ID: id, Started: at, Command: "harp run", Results: []Result{{
		Suite: "3517", Upstream: "haproxy/haproxy#3517", Title: "tables lost on reload", Build: "deb:trixie", Name: "3.0.11-1+deb13u4",
		Version: "3.0.11-1+deb13u4", Verdict: verdict.Reproduced, TrialsRun: 3, TrialsViolated: 3, Reason: "first/marker lost in 3 of 3 reloads",
		Noun: "reloads", Steps: []string{"start with two peers sections", "reload"}, Config: "global\n  master-worker\n", VV: "HAProxy version 3.0.11-1+deb13u4",
		Trials: []verdict.Trial{{N: 1, Violation: "first/marker lost", Notes: []string{"new worker 12 listed"},
			Exchanges: []record.Exchange{{At: at, Target: "master", Command: "show proc"}, {At: at, Target: "worker 12", Command: "@!12 show table first/marker", Output: "# table: first/marker, type: string, size:1024, used:0"}}}},
	}, {
		Suite: "3519", Upstream: "haproxy/haproxy#3519", Build: "deb:trixie", Name: "3.0.11-1+deb13u4", Verdict: verdict.Pass, TrialsRun: 5,
	}}}
}

func TestLoadReadsEvidenceBack(t *testing.T) {
	root := t.TempDir()
	dir, err := Write(root, sampleRun("r1"))
	if err != nil {
		t.Fatal(err)
	}
	run, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	r := run.Results[0]
	if r.Config != "global\n  master-worker\n" || !strings.HasPrefix(r.VV, "HAProxy version") || len(r.Trials) != 1 ||
		len(r.Trials[0].Exchanges) != 2 || r.Noun != "reloads" || len(r.Steps) != 2 {
		t.Errorf("loaded %+v", r)
	}
	if run.Results[1].Evidence != "" {
		t.Errorf("a result with nothing to keep got evidence %q", run.Results[1].Evidence)
	}
	if _, err := Load(t.TempDir()); err == nil || !strings.Contains(err.Error(), "not a harp run directory") {
		t.Errorf("Load of an empty dir: %v", err)
	}
}

func TestMergeCarriesEvidence(t *testing.T) {
	root := t.TempDir()
	a, _ := Write(filepath.Join(root, "a"), sampleRun("a"))
	run, err := Merge("m", []string{a})
	if err != nil {
		t.Fatal(err)
	}
	dir, err := Write(filepath.Join(root, "m"), run)
	if err != nil {
		t.Fatal(err)
	}
	back, _ := Load(dir)
	if back.Results[0].Config == "" || len(back.Results[0].Trials) != 1 {
		t.Errorf("merged run lost the shard's evidence: %+v", back.Results[0])
	}
	if _, err := os.Stat(filepath.Join(dir, "report.html")); err != nil {
		t.Error(err)
	}
}

func TestIssueMarkdown(t *testing.T) {
	md, err := IssueMarkdown(sampleRun("r1"), "haproxy/haproxy#3517")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| `deb:trixie` | 3.0.11-1+deb13u4 | **REPRODUCED** | 3 of 3 reloads violated the expectation |",
		"make test-3517 HAPROXY='deb:trixie'",
		"<details><summary>haproxy -vv: 3.0.11-1+deb13u4</summary>",
		"<details><summary>Configuration (3.0.11-1+deb13u4)</summary>",
		"1. start with two peers sections",
		"**First violation**: 3.0.11-1+deb13u4, reload 1: first/marker lost",
		"worker 12> @!12 show table first/marker",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("issue report lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "show proc") || strings.Contains(md, "3519") {
		t.Errorf("issue report shows polls or other suites:\n%s", md)
	}
	if _, err := IssueMarkdown(sampleRun("r1"), "9999"); err == nil || !strings.Contains(err.Error(), "no results for issue 9999 (it has: 3517, 3519)") {
		t.Errorf("unknown issue: %v", err)
	}
	// Many builds, long -vv, long lines: the document still fits a GitHub
	// comment, cut at line boundaries with the cuts said.
	big := sampleRun("r1")
	for i := range 12 {
		r := big.Results[0]
		r.Name, r.Build = fmt.Sprintf("b%d", i), fmt.Sprintf("deb:b%d", i)
		r.VV = strings.Repeat("Feature list : +EPOLL +KQUEUE "+strings.Repeat("x", 100)+"\n", 100)
		r.Config = strings.Repeat(fmt.Sprintf("    # build %d config line\n", i), 400)
		big.Results = append(big.Results, r)
	}
	for range 12 {
		big.Results[0].Trials[0].Exchanges = append(big.Results[0].Trials[0].Exchanges, record.Exchange{Target: "worker 12", Command: "show peers",
			Output: strings.Repeat(strings.Repeat("y", 3000)+"\n", 20)})
	}
	md, _ = IssueMarkdown(big, "3517")
	if len(md) > 65536 {
		t.Errorf("issue report of %d characters does not fit a GitHub comment", len(md))
	}
	for _, want := range []string{"cut to fit a GitHub comment", "**First violation**", "haproxy -vv: b11", "Configuration (b11)"} {
		if !strings.Contains(md, want) {
			t.Errorf("cut issue report lacks %q", want)
		}
	}
	if strings.Count(md, "```")%2 != 0 || strings.Count(md, "<details>") != strings.Count(md, "</details>") {
		t.Errorf("cut issue report has unbalanced fences or details blocks")
	}
}

// A verdict line is one line, whatever the reason holds.
func TestLineIsOneLine(t *testing.T) {
	r := Result{Suite: "3517", Name: "3.0.11", Verdict: "ERROR", Reason: "node-3517 on 3.0.11 did not become ready: the master exited with code 1\nlast log lines:\n[ALERT] parsing [/etc/harp/haproxy.cfg:3]"}
	if l := r.Line(); strings.Contains(l, "\n") || !strings.HasSuffix(l, "code 1 [more in report.md])") {
		t.Errorf("line: %q", l)
	}
	if id1, id2 := NewID(), NewID(); id1 == id2 {
		t.Errorf("two run ids in the same second of the same process are equal: %s", id1)
	}
}

func TestPropertyMarkdown(t *testing.T) {
	run := sampleRun("r1")
	run.Results = append(run.Results, Result{Suite: "conf-learned-entries-obey-receiver", Upstream: "conformance: a peer's entries are stored by the receiving table's rules",
		Title: "Entries learnt from a peer obey the receiving table", Build: "deb:bookworm", Name: "2.6.12-1+deb12u3", Version: "2.6.12-1+deb12u3",
		Verdict: verdict.Reproduced, TrialsRun: 9, TrialsViolated: 2, Noun: "checks", Reason: "crafted: huge expiry: ... in 1 of 9 checks",
		Trials: []verdict.Trial{{N: 6, Violation: "crafted: huge expiry: a timed update with expire 2147483647 ms made ce-006 expire in 2147483646 ms, beyond the table's 10s"}}},
		Result{Suite: "conf-learned-entries-obey-receiver", Build: "deb:trixie", Name: "3.0.11-1+deb13u4", Verdict: verdict.Pass, TrialsRun: 9, Noun: "checks"})
	md, err := PropertyMarkdown(run, "conf-learned-entries-obey-receiver")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"### harp: conformance property `conf-learned-entries-obey-receiver`: Entries learnt from a peer obey the receiving table",
		"The property is **violated** by `deb:bookworm` (1 of 2 builds tested)",
		"| `deb:trixie` |  | **PASS** | 0 of 9 checks violated the expectation |",
		"make test-conf-learned-entries-obey-receiver HAPROXY='deb:bookworm deb:trixie'",
		"**First violation**: 2.6.12-1+deb12u3, check 6: crafted: huge expiry",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("property report lacks %q:\n%s", want, md)
		}
	}
}

func TestCrashMarkdown(t *testing.T) {
	run := sampleRun("r1")
	run.Results[0].Crashes = []verdict.Crash{{Node: "node-conf-runtime-limits", PID: 8, Code: 139, Signal: "Segmentation fault",
		LastLog:   "[NOTICE]   (1) : haproxy version is 3.0.11\n[ALERT]    (1) : Current worker (8) exited with code 139 (Segmentation fault)",
		Backtrace: "Thread 1 (Thread 0x7f (LWP 8)):\n#0  0x000055d cli_parse_set_maxconn_global (args=0x7ffc) at src/cli.c:1953\n" + strings.Repeat("        x = 0\n", 10000)}}
	md, err := IssueMarkdown(run, "3517")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"**Crash**: worker 8 of node-conf-runtime-limits exited with code 139 (Segmentation fault).",
		"exited with code 139 (Segmentation fault)\n```",
		"#0  0x000055d cli_parse_set_maxconn_global (args=0x7ffc) at src/cli.c:1953",
		"more lines in summary.json]",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("issue report lacks %q", want)
		}
	}
	if len(md) > 65536 {
		t.Errorf("the report with a long backtrace is %d characters: over GitHub's limit", len(md))
	}
}

// A nightly's change list names the findings that moved, in both formats.
func TestFindingChangesRendered(t *testing.T) {
	run := Run{ID: "n2", Since: "n1", FindingChanges: []string{"new finding F-e11e1321 conf-failed-reload/master-survives.syntax-error: 3.4.7-1"}}
	md := Markdown(run)
	page, err := HTML(run)
	if err != nil {
		t.Fatal(err)
	}
	for name, doc := range map[string]string{"report.md": md, "report.html": string(page)} {
		if !strings.Contains(doc, "new finding F-e11e1321 conf-failed-reload/master-survives.syntax-error: 3.4.7-1") {
			t.Errorf("%s does not name the finding that moved", name)
		}
	}
}

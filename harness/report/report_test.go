package report

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/harp-project/harp/harness/node"
	"github.com/harp-project/harp/harness/verdict"
)

func TestLine(t *testing.T) {
	r := Result{Suite: "3517", Name: "3.4.7-1", Verdict: verdict.Reproduced, Reason: "first/marker lost in 3 of 3 reloads"}
	if got := r.Line(); got != "#3517 on 3.4.7-1: REPRODUCED (first/marker lost in 3 of 3 reloads)" {
		t.Errorf("Line() = %q", got)
	}
}

func TestTrimFoldsPolls(t *testing.T) {
	ex := []node.Exchange{
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

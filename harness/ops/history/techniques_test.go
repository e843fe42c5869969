package history

import (
	"strings"
	"testing"
)

func TestReadTechniques(t *testing.T) {
	good := "# comment\n" +
		"0a012aa16b77\tobservable\tproc\twait-mode master's nofile limit huge on bad\n" +
		"51d6f1ca4f75\tobservable\texec+proc\tSIGSTOP the master: bad worker hangs\n" +
		"b2f38c13d1b1\tnot-observable\tnone\tonly on architectures without PAUSE\n"
	ts, err := ReadTechniques(strings.NewReader(good))
	if err != nil || len(ts) != 3 || !ts["51d6f1ca4f75"].Observable || ts["b2f38c13d1b1"].Observable {
		t.Fatalf("%v %+v", err, ts)
	}
	for _, bad := range []string{
		"0a012aa16b77\tobservable\tnone\tno technique yet observable\n",
		"0a012aa16b77\tnot-observable\tproc\ta technique yet not observable\n",
		"0a012aa16b77\tobservable\tstrace\tno such technique\n",
		"0a012aa16b77\tmaybe\tproc\tno such verdict\n",
		"0a012aa16b77\tobservable\tproc\n",
		"0a012aa16b77\tobservable\tproc\t\n",
		"xyz\tobservable\tproc\tno commit\n",
		"0a012aa16b77\tobservable\tproc\tonce\n0a012aa16b77\tobservable\tproc\ttwice\n",
	} {
		if _, err := ReadTechniques(strings.NewReader(bad)); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}

func TestWithTechniques(t *testing.T) {
	js := map[string]Judgement{
		"0a012aa16b77": {Commit: "0a012aa16b77", Why: "only visible as RSS", Catch: "-"},
		"b2f38c13d1b1": {Commit: "b2f38c13d1b1", Why: "x86 has PAUSE", Catch: "-"},
		"bac3a82a507b": {Commit: "bac3a82a507b", Observable: true, Why: "any @<n> accepted", Catch: "upstream-fixes-master/mcli-relative-pid-checked"},
	}
	ts := map[string]Technique{
		"0a012aa16b77": {Commit: "0a012aa16b77", Observable: true, Tags: "proc", Why: "nofile limit in /proc"},
		"b2f38c13d1b1": {Commit: "b2f38c13d1b1", Tags: "none", Why: "architectures without PAUSE only"},
	}
	out, err := WithTechniques(js, ts)
	if err != nil {
		t.Fatal(err)
	}
	if j := out["0a012aa16b77"]; !j.Observable || j.Technique != "proc" || j.Why != "nofile limit in /proc" {
		t.Errorf("observable with proc: %+v", j)
	}
	if j := out["b2f38c13d1b1"]; j.Observable || j.Technique != "none" {
		t.Errorf("still out of reach: %+v", j)
	}
	if js["0a012aa16b77"].Observable {
		t.Error("the judgements given were changed")
	}
	if _, err := WithTechniques(js, map[string]Technique{"bac3a82a507b": {Observable: true, Tags: "cli", Why: "x"}}); err == nil {
		t.Error("a technique row for a fix judged observable already was taken")
	}
	if _, err := WithTechniques(js, map[string]Technique{"deadbeef0000": {Tags: "none", Why: "x"}}); err == nil {
		t.Error("a technique row without a judgement was taken")
	}
}

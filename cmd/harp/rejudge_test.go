package main

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/harp-project/harp/harness/core/chaos"
	chaossuite "github.com/harp-project/harp/suites/chaos"
)

// harp rejudge finds the histories a chaos run stored in its trials and
// judges them again: a history that breaks the model exits 1.
func TestCheckStoredHistories(t *testing.T) {
	t0 := time.Now()
	h := chaos.History{Seed: 9, Nodes: []string{"node1", "node2"}, Main: "tbl", Owners: map[string]string{"a": "node1"}, Tables: map[string]int64{"tbl": 600000},
		Ops:     []chaos.Op{{ID: 1, Kind: chaos.SetCLI, Node: "node1", Table: "tbl", Key: "a", Value: 10, Start: t0, End: t0, OK: true}},
		Final:   map[string]map[string]map[string]chaos.Entry{"node1": {"tbl": {"a": {GPC0: 10}}}, "node2": {"tbl": {"a": {GPC0: 10}}}},
		FinalAt: t0.Add(time.Second)}
	dir := t.TempDir()
	write := func(h chaos.History) {
		os.MkdirAll(filepath.Join(dir, "01-chaos-3.4.7-1"), 0o755)
		data, _ := json.Marshal([]map[string]any{{"n": 1, "evidence": chaossuite.Evidence{Result: chaos.Check(h), History: h}}})
		os.WriteFile(filepath.Join(dir, "01-chaos-3.4.7-1", "trials.json"), data, 0o644)
	}
	write(h)
	if code := cmdRejudge([]string{dir}); code != 0 {
		t.Errorf("a history that keeps the model: exit %d", code)
	}
	h.Final["node2"]["tbl"]["a"] = chaos.Entry{GPC0: 0}
	write(h)
	if code := cmdRejudge([]string{dir}); code != 1 {
		t.Errorf("a diverged history: exit %d", code)
	}
	if code := cmdRejudge([]string{t.TempDir()}); code != 3 {
		t.Errorf("no history: exit %d", code)
	}
}

// #29: harp rejudge refuses what is not a chaos history, naming the file and
// the problem, and keeps its lines short however many operations a key had.
func TestCheckRefusesMalformed(t *testing.T) {
	t0 := time.Now()
	good := func() chaos.History {
		return chaos.History{Seed: 9, Nodes: []string{"node1", "node2"}, Main: "tbl", Owners: map[string]string{"a": "node1"}, Tables: map[string]int64{"tbl": 600000},
			Ops:     []chaos.Op{{ID: 1, Kind: chaos.SetCLI, Node: "node1", Table: "tbl", Key: "a", Value: 10, Start: t0, End: t0, OK: true}},
			Final:   map[string]map[string]map[string]chaos.Entry{"node1": {"tbl": {"a": {GPC0: 10}}}, "node2": {"tbl": {"a": {GPC0: 10}}}},
			FinalAt: t0.Add(time.Second)}
	}
	run := func(args ...string) (int, string) {
		r, w, _ := os.Pipe()
		saved, savedOut := os.Stderr, os.Stdout
		os.Stderr, os.Stdout = w, w
		code := cmdRejudge(args)
		os.Stderr, os.Stdout = saved, savedOut
		w.Close()
		out, _ := io.ReadAll(r)
		return code, string(out)
	}
	dir := t.TempDir()
	trials := filepath.Join(dir, "01-chaos-3.4.7-1", "trials.json")
	os.MkdirAll(filepath.Dir(trials), 0o755)
	os.WriteFile(trials, []byte("{garbage"), 0o644)
	if code, out := run(dir); code != 3 || !strings.Contains(out, trials) || !strings.Contains(out, "not a trials file") {
		t.Errorf("a garbage trials.json: exit %d: %s", code, out)
	}
	h := good()
	h.Ops = append(h.Ops, chaos.Op{ID: 2, Kind: chaos.SetCLI, Node: "node7", Table: "tbl", Key: "a", Start: t0, End: t0})
	data, _ := json.Marshal([]map[string]any{{"n": 1, "evidence": chaossuite.Evidence{History: h}}})
	os.WriteFile(trials, data, 0o644)
	if code, out := run(dir); code != 3 || !strings.Contains(out, trials+": trial 1") || !strings.Contains(out, `op 2: node "node7"`) {
		t.Errorf("a history with an unknown node: exit %d: %s", code, out)
	}
	path := filepath.Join(t.TempDir(), "history.json")
	h.Save(path)
	if code, out := run(path); code != 3 || !strings.Contains(out, path) || !strings.Contains(out, `op 2: node "node7"`) {
		t.Errorf("a history file with an unknown node: exit %d: %s", code, out)
	}
	// A key touched by 500 operations: its line names a few.
	h = good()
	for i := 2; i <= 500; i++ {
		h.Ops = append(h.Ops, chaos.Op{ID: i, Kind: chaos.SetCLI, Node: "node1", Table: "tbl", Key: "a", Value: 10, Start: t0, End: t0, OK: true})
	}
	h.Final["node2"]["tbl"]["a"] = chaos.Entry{GPC0: 20}
	h.Save(path)
	code, out := run(path)
	if code != 1 || !strings.Contains(out, "and 490 more") {
		t.Errorf("a long list of operations: exit %d: %s", code, out)
	}
	for _, line := range strings.Split(out, "\n") {
		if len(line) > 400 {
			t.Errorf("a line of %d characters: %.200s...", len(line), line)
		}
	}
}

// #29: harp chaos's own flags are named in its errors, and an empty
// --faults is not every fault; nothing runs.
func TestChaosFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--count", "0"}, "--count 0: want 1 to 1000"},
		{[]string{"--count", "1001"}, "--count 1001"},
		{[]string{"--faults", ""}, "--faults: no fault kind given"},
		{[]string{"--faults", "latency,"}, "--faults: an empty fault kind"},
	} {
		r, w, _ := os.Pipe()
		saved := os.Stderr
		os.Stderr = w
		// Cancelled: a check that let the flags through must not start a run.
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		code := cmdChaos(ctx, c.args)
		os.Stderr = saved
		w.Close()
		out, _ := io.ReadAll(r)
		if code != 3 || !strings.Contains(string(out), c.want) || strings.Contains(string(out), "--trials") {
			t.Errorf("%v: exit %d: %s", c.args, code, out)
		}
	}
}

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/harp-project/harp/harness/chaos"
	chaossuite "github.com/harp-project/harp/suites/chaos"
)

// harp check finds the histories a chaos run stored in its trials and
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
	if code := cmdCheck([]string{dir}); code != 0 {
		t.Errorf("a history that keeps the model: exit %d", code)
	}
	h.Final["node2"]["tbl"]["a"] = chaos.Entry{GPC0: 0}
	write(h)
	if code := cmdCheck([]string{dir}); code != 1 {
		t.Errorf("a diverged history: exit %d", code)
	}
	if code := cmdCheck([]string{t.TempDir()}); code != 3 {
		t.Errorf("no history: exit %d", code)
	}
}

package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/harp-project/harp/harness/core/suite"

	"github.com/harp-project/harp/harness/core/chaos"
)

// cmdChaos runs randomized peers histories: the chaos suite with its
// parameters as flags, one history per --count, each seed the previous
// plus one. Exit codes are harp run's.
func cmdChaos(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("chaos", flag.ContinueOnError)
	build := fs.String("haproxy", "deb:latest", "build spec")
	nodes := fs.Int("nodes", 3, "cluster size (3 to 9)")
	duration := fs.Duration("duration", 30*time.Second, "how long faults and writes run, per history")
	seed := fs.Int64("seed", 0, "the first history's seed (0: from the clock; printed)")
	faults := fs.String("faults", "all", "faults to draw from, comma-separated: "+strings.Join(chaos.FaultKinds, ","))
	count := fs.Int("count", 1, "histories to run, each with the next seed")
	failfast := fs.Bool("failfast", false, "stop at the first history that breaks the model")
	reports := fs.String("reports", "reports", "directory for reports")
	if !flags(fs, args) {
		return 3
	}
	// The suite's own parameter check, from the registry.
	suites, err := suite.Select("suite:chaos")
	if err != nil || len(suites) != 1 {
		return fail("chaos: the chaos suite is not registered: %v", err)
	}
	for _, p := range suites[0].Params {
		if p.Name != "FAULTS" {
			continue
		}
		if err := p.Check(*faults); err != nil {
			if inner := errors.Unwrap(err); inner != nil {
				err = inner // --faults is the name the user gave
			}
			return fail("chaos: --faults: %v", err)
		}
	}
	// Checked here: harp run's own message would name its --trials.
	if *count < 1 || *count > maxTrials {
		return fail("chaos: --count %d: want 1 to %d", *count, maxTrials)
	}
	if *seed == 0 {
		*seed = time.Now().UnixNano() % 1_000_000_000
	}
	ff := "0"
	if *failfast {
		ff = "1"
	}
	code := cmdRun(ctx, []string{"--suites", "suite:chaos", "--haproxy", *build, "--trials", fmt.Sprint(*count), "--reports", *reports,
		"--param", fmt.Sprintf("NODES=%d", *nodes), "--param", "DURATION=" + duration.String(), "--param", fmt.Sprintf("SEED=%d", *seed),
		"--param", "FAULTS=" + *faults, "--param", "FAILFAST=" + ff})
	// Each history also as a file of its own, beside the run's report.
	if run, err := os.Readlink(filepath.Join(*reports, "latest")); err == nil {
		dir := filepath.Join(*reports, run)
		if hs, err := loadHistories(dir); err == nil {
			for _, h := range hs {
				path := filepath.Join(dir, fmt.Sprintf("history-%d.json", h.Seed))
				if err := h.Save(path); err == nil {
					fmt.Printf("history (seed %d): %s (harp rejudge %s)\n", h.Seed, path, dir)
				}
			}
		}
	}
	return code
}

// cmdRejudge runs the chaos checker again on the histories of a run
// directory (or on one history file), and says what it finds. Exit: 0
// every history passes, 1 one breaks the model, 2 inconclusive, 3 none read.
func cmdRejudge(args []string) int {
	if len(args) != 1 || strings.HasPrefix(args[0], "-") {
		return fail("usage: harp rejudge RUNDIR | history.json")
	}
	histories, err := loadHistories(args[0])
	if err != nil {
		return fail("rejudge: %v", err)
	}
	worst := 0
	for _, h := range histories {
		r := chaos.Check(h)
		fmt.Printf("history seed %d (%d nodes, %d operations): %s (%s)\n", h.Seed, len(h.Nodes), len(h.Ops), r.Verdict, r.Reason)
		for i, v := range r.Violations {
			if i == 10 {
				fmt.Printf("  ... %d more\n", len(r.Violations)-10)
				break
			}
			fmt.Printf("  %s: %s (operations %s)\n", v.Key, v.What, chaos.IDs(v.Ops, 10))
		}
		code := map[string]int{"PASS": 0, "REPRODUCED": 1, "INCONCLUSIVE": 2}[r.Verdict]
		if code == 1 || (code == 2 && worst == 0) {
			worst = code
		}
	}
	return worst
}

// loadHistories reads a history.json, or every chaos history a run
// directory's trials hold.
func loadHistories(path string) ([]chaos.History, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		h, err := chaos.Load(path)
		return []chaos.History{h}, err
	}
	var out []chaos.History
	if files, _ := filepath.Glob(filepath.Join(path, "history-*.json")); len(files) > 0 {
		for _, f := range files {
			h, err := chaos.Load(f)
			if err != nil {
				return nil, err
			}
			out = append(out, h)
		}
		return out, nil
	}
	files, _ := filepath.Glob(filepath.Join(path, "*", "trials.json"))
	for _, f := range files {
		data, err := chaos.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var trials []struct {
			N        int             `json:"n"`
			Evidence json.RawMessage `json:"evidence"`
		}
		if err := json.Unmarshal(data, &trials); err != nil {
			return nil, fmt.Errorf("%s: not a trials file: %v", f, err)
		}
		for i, t := range trials {
			// Other suites' trials hold other evidence: only one with a
			// history is a chaos trial, and it must be a valid one.
			var ev struct {
				History json.RawMessage `json:"history"`
			}
			if len(t.Evidence) == 0 || string(t.Evidence) == "null" || json.Unmarshal(t.Evidence, &ev) != nil || len(ev.History) == 0 {
				continue
			}
			var h chaos.History
			if err := json.Unmarshal(ev.History, &h); err != nil {
				return nil, fmt.Errorf("%s: trial %d (#%d): not a chaos history: %v", f, t.N, i+1, err)
			}
			if err := h.Validate(); err != nil {
				return nil, fmt.Errorf("%s: trial %d (#%d): %w", f, t.N, i+1, err)
			}
			out = append(out, h)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s holds no chaos history (harp chaos writes them into the run's trials.json)", path)
	}
	return out, nil
}

package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/harp-project/harp/harness/findings"
	"github.com/harp-project/harp/harness/gitsrc"
	"github.com/harp-project/harp/harness/history"
	"github.com/harp-project/harp/harness/progress"
)

// cmdHistory writes the scoreboard: upstream's fixes, the judgements of
// what harp can see, and the verdicts of runs on the releases around each.
func cmdHistory(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("history", flag.ContinueOnError)
	repo := fs.String("repo", "", "a clone of haproxy/haproxy (required)")
	since := fs.String("since", "v2.6.0", "the .0 release the history starts at")
	head := fs.String("head", "HEAD", "the newest commit looked at")
	judged := fs.String("judgements", "fixtures/upstream-bugs/judgements.tsv", "what each fix is judged (observable, why, the finding that catches it)")
	techniques := fs.String("techniques", "fixtures/upstream-bugs/techniques.tsv", "fixes judged again against harp's techniques (none: the judgements alone)")
	reports := fs.String("reports", "", "run directories (or trees of them) whose verdicts fill the release columns, separated by commas")
	outFile := fs.String("out", "docs/upstream-bugs.md", "where the scoreboard goes (- for stdout)")
	asJSON := fs.Bool("json", false, "write the board as JSON")
	if !flags(fs, args) {
		return 3
	}
	if *repo == "" {
		return fail("history: --repo names a clone of haproxy/haproxy")
	}
	js, err := loadJudgements(*judged, *techniques)
	if err != nil {
		return fail("history: %v", err)
	}
	runs, err := scanRuns(strings.Split(*reports, ","))
	if err != nil {
		return fail("history: %v", err)
	}
	progress.Printf("history: reading BUG/ fixes %s..%s in %s", *since, *head, *repo)
	fixes, err := history.Collect(ctx, *repo, *since, *head)
	if err != nil {
		return fail("history: %v", err)
	}
	b := history.Make(fixes, js, runs)
	if c, err := gitsrc.Resolve(ctx, *repo, *head); err == nil {
		b.Head = c.Describe + " (" + c.Short() + ")"
	}
	var text string
	if *asJSON {
		data, _ := json.MarshalIndent(b, "", "  ")
		text = string(data) + "\n"
	} else {
		cmd := "harp history --repo CLONE"
		if *since != "v2.6.0" {
			cmd += " --since " + *since
		}
		if *reports != "" {
			cmd += " --reports " + *reports
		}
		text = b.Markdown(cmd)
	}
	if *outFile == "-" {
		fmt.Print(text)
	} else if err := os.WriteFile(*outFile, []byte(text), 0o644); err != nil {
		return fail("history: %v", err)
	}
	for _, u := range b.Unused {
		fmt.Fprintf(os.Stderr, "history: %s not used: %s\n", u.Dir, u.Why)
	}
	fmt.Fprintf(os.Stderr, "history: %d fixes, %d observable, %d caught, %d missed, %d inconclusive, %d not run, %d without a check, %d not judged\n",
		len(b.Rows), b.Observable, b.Counts[history.Caught], b.Counts[history.Missed], b.Counts[history.Inconclusive], b.Counts[history.NotRun], b.Counts[history.NoCheck], b.Counts[history.Unjudged])
	return 0
}

// loadJudgements reads the judgements and, unless techniques is "none",
// judges again the fixes the techniques file names.
func loadJudgements(judged, techniques string) (map[string]history.Judgement, error) {
	f, err := os.Open(judged)
	if err != nil {
		return nil, fmt.Errorf("judgements: %v", err)
	}
	js, err := history.ReadJudgements(f)
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("%s: %v", judged, err)
	}
	if techniques == "none" {
		return js, nil
	}
	f, err = os.Open(techniques)
	if err != nil {
		return nil, fmt.Errorf("techniques: %v", err)
	}
	ts, err := history.ReadTechniques(f)
	f.Close()
	if err == nil {
		js, err = history.WithTechniques(js, ts)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %v", techniques, err)
	}
	return js, nil
}

// scanRuns reads every run under the directories given (empty ones
// skipped), each run's Dir made a path from here.
func scanRuns(dirs []string) ([]findings.Scanned, error) {
	var runs []findings.Scanned
	for _, dir := range dirs {
		if dir = strings.TrimSpace(dir); dir == "" {
			continue
		}
		got, err := findings.Scan(dir)
		if err != nil {
			return nil, err
		}
		for i := range got {
			got[i].Dir = filepath.Join(dir, got[i].Dir)
		}
		runs = append(runs, got...)
	}
	return runs, nil
}

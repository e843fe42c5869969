package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/harp-project/harp/harness/core/progress"
	"github.com/harp-project/harp/harness/live/gitsrc"
	"github.com/harp-project/harp/harness/ops/findings"
	"github.com/harp-project/harp/harness/ops/history"
)

// cmdHistory writes the scoreboard: upstream's fixes, the judgements of
// what harp can see, and the verdicts of runs on the releases around each.
func cmdHistory(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("history", flag.ContinueOnError)
	bf := newBoardFlags(fs, "a clone of haproxy/haproxy (required)")
	reports := fs.String("reports", "", "run directories (or trees of them) whose verdicts fill the release columns, separated by commas")
	asJSON := fs.Bool("json", false, "write the board as JSON")
	if !flags(fs, args) {
		return 3
	}
	fixes, js, err := bf.load(ctx, "history")
	if err != nil {
		return fail("history: %v", err)
	}
	runs, err := scanRuns(strings.Split(*reports, ","))
	if err != nil {
		return fail("history: %v", err)
	}
	b := history.Make(fixes, js, runs)
	cmd := "harp history --repo CLONE"
	if *reports != "" {
		cmd += " --reports " + *reports
	}
	if err := bf.write(ctx, &b, cmd, *asJSON); err != nil {
		return fail("history: %v", err)
	}
	for _, u := range b.Unused {
		fmt.Fprintf(os.Stderr, "history: %s not used: %s\n", u.Dir, u.Why)
	}
	fmt.Fprintf(os.Stderr, "history: %d fixes, %d observable, %d caught, %d suite only, %d missed, %d inconclusive, %d not run, %d without a check, %d not judged\n",
		len(b.Rows), b.Observable, b.Counts[history.Caught], b.Counts[history.SuiteOnly], b.Counts[history.Missed], b.Counts[history.Inconclusive], b.Counts[history.NotRun], b.Counts[history.NoCheck], b.Counts[history.Unjudged])
	return 0
}

// boardFlags are what the scoreboard's commands (history, scoreboard)
// share: the clone and range of fixes, the judgements, where the doc goes.
type boardFlags struct {
	repo, since, head, judged, techniques, out, bisects *string
}

func newBoardFlags(fs *flag.FlagSet, repoHelp string) *boardFlags {
	return &boardFlags{
		repo:       fs.String("repo", "", repoHelp),
		since:      fs.String("since", "v2.6.0", "the .0 release the history starts at"),
		head:       fs.String("head", "HEAD", "the newest commit looked at"),
		judged:     fs.String("judgements", "fixtures/upstream-bugs/judgements.tsv", "what each fix is judged (observable, why, the finding that catches it)"),
		techniques: fs.String("techniques", "fixtures/upstream-bugs/techniques.tsv", "fixes judged again against harp's techniques (none: the judgements alone)"),
		out:        fs.String("out", "docs/upstream-bugs.md", "where the scoreboard goes (- for stdout)"),
		bisects:    fs.String("bisects", "fixtures/upstream-bugs/bisects", "the bisects of caught fixes (<fix>.json: a harp bisect's bisect.json), for the bisect column"),
	}
}

// load checks --repo (made absolute: builds name it), reads the
// judgements and collects the fixes.
func (bf *boardFlags) load(ctx context.Context, what string) ([]history.Fix, map[string]history.Judgement, error) {
	if *bf.repo == "" {
		return nil, nil, fmt.Errorf("--repo names a clone of haproxy/haproxy")
	}
	abs, err := filepath.Abs(*bf.repo)
	if err != nil {
		return nil, nil, err
	}
	*bf.repo = abs
	js, err := loadJudgements(*bf.judged, *bf.techniques)
	if err != nil {
		return nil, nil, err
	}
	progress.Printf("%s: reading BUG/ fixes %s..%s in %s", what, *bf.since, *bf.head, abs)
	fixes, err := history.Collect(ctx, abs, *bf.since, *bf.head)
	return fixes, js, err
}

// write puts the board into --out: as JSON, or as the doc whose first
// line names cmd (and --since when it is not the default).
func (bf *boardFlags) write(ctx context.Context, b *history.Board, cmd string, asJSON bool) error {
	if c, err := gitsrc.Resolve(ctx, *bf.repo, *bf.head); err == nil {
		b.Head = c.Describe + " (" + c.Short() + ")"
	}
	bs, err := history.ReadBisects(*bf.bisects)
	if err != nil {
		return err
	}
	b.WithBisects(bs)
	rel, err := history.ReadRelated(*bf.bisects)
	if err != nil {
		return err
	}
	b.WithRelated(rel)
	var text string
	if asJSON {
		data, _ := json.MarshalIndent(b, "", "  ")
		text = string(data) + "\n"
	} else {
		if *bf.since != "v2.6.0" {
			cmd += " --since " + *bf.since
		}
		text = b.Markdown(cmd)
	}
	if *bf.out == "-" {
		fmt.Print(text)
		return nil
	}
	return os.WriteFile(*bf.out, []byte(text), 0o644)
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

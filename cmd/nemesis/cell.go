package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/moby/moby/client"

	"github.com/harp-project/harp/harness/core/spec"
	"github.com/harp-project/harp/harness/core/suite"
	"github.com/harp-project/harp/harness/core/verdict"
	"github.com/harp-project/harp/harness/live/nemesis"
	"github.com/harp-project/harp/harness/ops/runner"
	"github.com/harp-project/harp/images"
)

// Run is one cell under one seed.
type Run struct {
	Cell   Cell
	Seed   int64
	Got    verdict.Verdict
	Reason string
	Faults int
	// Setup: the cell could not run at all (its image); no verdict.
	Setup string
	// Checks: each check's tally over the run's decided trials.
	Checks []verdict.Tally
}

// Bent says the harness faults bent the verdict: REPRODUCED on a build
// without the bug, PASS on one with it; or bent a check (BentChecks).
func (r Run) Bent() bool {
	return r.Setup == "" && ((r.Cell.Truth == verdict.Pass && r.Got == verdict.Reproduced) ||
		(r.Cell.Truth == verdict.Reproduced && r.Got == verdict.Pass) || len(r.BentChecks()) > 0)
}

// BentChecks are the checks whose verdict the faults bent, judged per
// check, not per suite: on a build without the suite's bugs, a check that
// failed; on one with them (Cell.Fails given), a check of Fails that held
// in a decided trial, or any other check that failed. A bent check hides
// behind a suite verdict that is right for another check's reason.
func (r Run) BentChecks() []string {
	var bent []string
	for _, c := range r.Checks {
		switch {
		case r.Cell.Truth == verdict.Pass && c.Failed > 0:
			bent = append(bent, fmt.Sprintf("%s failed %d times (%s)", c.ID, c.Failed, c.Example))
		case r.Cell.Fails == nil:
		case slices.Contains(r.Cell.Fails, c.ID) && c.Held > 0:
			bent = append(bent, fmt.Sprintf("%s held %d times where its bug is", c.ID, c.Held))
		case !slices.Contains(r.Cell.Fails, c.ID) && c.Failed > 0:
			bent = append(bent, fmt.Sprintf("%s failed %d times where its fix is (%s)", c.ID, c.Failed, c.Example))
		}
	}
	return bent
}

func runCell(ctx context.Context, docker *client.Client, b *images.Builder, id string, c Cell, seed int64) Run {
	r := Run{Cell: c, Seed: seed}
	s, err := spec.Parse(c.Spec)
	if err != nil {
		r.Setup = err.Error()
		return r
	}
	img, err := b.Ensure(ctx, s) // built before the faults: the build is not under test
	if err != nil {
		r.Setup = "building " + c.Spec + ": " + err.Error()
		return r
	}
	given, err := suite.ParseParams(c.Params)
	if err != nil {
		r.Setup = err.Error()
		return r
	}
	suites, err := suite.Select("suite:" + c.Suite)
	if err != nil {
		r.Setup = err.Error()
		return r
	}
	nemesis.Enable(seed)
	res := (&runner.Runner{Docker: docker, Builder: b, RunID: id, Params: given}).RunOne(ctx, suites[0], img)
	r.Faults = len(nemesis.Faults())
	nemesis.Disable()
	r.Got, r.Reason = res.Verdict, res.Reason
	r.Checks = verdict.TallyChecks(res.Trials)
	if evidence != "" { // every run's result, its trials' evidence and injected faults included
		name := fmt.Sprintf("%s-%s-seed%d.json", c.Suite, strings.NewReplacer("/", "_", ":", "_", ",", "_", "=", "_").Replace(c.Spec), seed)
		if data, err := json.MarshalIndent(struct {
			Result any             `json:"result"`
			Trials []verdict.Trial `json:"trials"`
		}{res, res.Trials}, "", " "); err == nil {
			os.WriteFile(filepath.Join(evidence, name), data, 0o644)
		}
	}
	return r
}

// evidence is the directory each run's result goes to ("": none).
var evidence string

// Histogram is the Markdown table of verdicts per suite and truth, and
// the bent runs with their reasons.
func Histogram(runs []Run, seeds []int64) string {
	type key struct{ suite, spec, truth string }
	count := map[key]map[verdict.Verdict]int{}
	faults := map[key]int{}
	var keys []key
	for _, r := range runs {
		k := key{r.Cell.Suite, r.Cell.Spec, string(r.Cell.Truth)}
		if count[k] == nil {
			count[k] = map[verdict.Verdict]int{}
			keys = append(keys, k)
		}
		v := r.Got
		if r.Setup != "" {
			v = "NOT RUN"
		}
		count[k][v]++
		faults[k] += r.Faults
	}
	sort.SliceStable(keys, func(i, j int) bool { return keys[i].suite < keys[j].suite })
	var b strings.Builder
	fmt.Fprintf(&b, "### harp under its own faults (nemesis seeds %v)\n\n", seeds)
	b.WriteString("| suite | build | truth | PASS | REPRODUCED | INCONCLUSIVE | ERROR | not run | faults injected | bent |\n|---|---|---|---|---|---|---|---|---|---|\n")
	total, bent := 0, 0
	for _, k := range keys {
		c := count[k]
		n := 0
		if k.truth == string(verdict.Pass) {
			n = c[verdict.Reproduced]
		} else {
			n = c[verdict.Pass]
		}
		total += c[verdict.Pass] + c[verdict.Reproduced] + c[verdict.Inconclusive] + c[verdict.Error]
		bent += n
		fmt.Fprintf(&b, "| %s | `%s` | %s | %d | %d | %d | %d | %d | %d | %d |\n", k.suite, k.spec, k.truth, c[verdict.Pass], c[verdict.Reproduced], c[verdict.Inconclusive], c[verdict.Error], c["NOT RUN"], faults[k], n)
	}
	fmt.Fprintf(&b, "\n%d runs, %d bent suite verdicts (REPRODUCED without the bug, or PASS with it).\n", total, bent)
	b.WriteString(checkHistogram(runs))
	for _, r := range runs {
		switch {
		case r.Bent():
			fmt.Fprintf(&b, "- BENT: %s on `%s`, seed %d: %s (%s)", r.Cell.Suite, r.Cell.Spec, r.Seed, r.Got, r.Reason)
			if bc := r.BentChecks(); len(bc) > 0 {
				fmt.Fprintf(&b, "; checks: %s", strings.Join(bc, "; "))
			}
			b.WriteString("\n")
		case r.Setup != "":
			fmt.Fprintf(&b, "- not run: %s on `%s`: %s\n", r.Cell.Suite, r.Cell.Spec, r.Setup)
		}
	}
	return b.String()
}

// ExitCode: 1 when a verdict was bent, 2 when a cell could not run, or no
// run at all happened, else 0.
func ExitCode(runs []Run) int {
	notRun := len(runs) == 0
	for _, r := range runs {
		if r.Bent() {
			return 1
		}
		if r.Setup != "" {
			notRun = true
		}
	}
	if notRun {
		return 2
	}
	return 0
}

// checkHistogram is the per-check table of the runs that name their
// checks: how often each held and failed in decided trials, against its
// truth on that build, and the bent count.
func checkHistogram(runs []Run) string {
	type key struct{ suite, spec, check string }
	type row struct {
		truth              string
		held, failed, bent int
	}
	rows := map[key]*row{}
	var keys []key
	for _, r := range runs {
		bentIDs := map[string]bool{}
		for _, c := range r.BentChecks() {
			id, _, _ := strings.Cut(c, " ")
			bentIDs[id] = true
		}
		for _, c := range r.Checks {
			k := key{r.Cell.Suite, r.Cell.Spec, c.ID}
			w := rows[k]
			if w == nil {
				truth := "holds"
				if r.Cell.Truth == verdict.Reproduced && (r.Cell.Fails == nil || slices.Contains(r.Cell.Fails, c.ID)) {
					truth = "fails"
				}
				w = &row{truth: truth}
				rows[k] = w
				keys = append(keys, k)
			}
			w.held += c.Held
			w.failed += c.Failed
			if bentIDs[c.ID] {
				w.bent++
			}
		}
	}
	if len(keys) == 0 {
		return ""
	}
	sort.SliceStable(keys, func(i, j int) bool {
		if keys[i].suite != keys[j].suite {
			return keys[i].suite < keys[j].suite
		}
		if keys[i].spec != keys[j].spec {
			return keys[i].spec < keys[j].spec
		}
		return keys[i].check < keys[j].check
	})
	var b strings.Builder
	b.WriteString("\n#### Per check (decided trials over every seed)\n\n| suite | build | check | truth | held | failed | bent runs |\n|---|---|---|---|---|---|---|\n")
	total := 0
	for _, k := range keys {
		w := rows[k]
		total += w.bent
		fmt.Fprintf(&b, "| %s | `%s` | %s | %s | %d | %d | %d |\n", k.suite, k.spec, k.check, w.truth, w.held, w.failed, w.bent)
	}
	fmt.Fprintf(&b, "\n%d checks, %d bent check results.\n\n", len(keys), total)
	return b.String()
}

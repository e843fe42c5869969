package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/moby/moby/client"

	"github.com/harp-project/harp/harness/nemesis"
	"github.com/harp-project/harp/harness/runner"
	"github.com/harp-project/harp/harness/scenario"
	"github.com/harp-project/harp/harness/spec"
	"github.com/harp-project/harp/harness/verdict"
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
}

// Bent says the harness faults bent the verdict: REPRODUCED on a build
// without the bug, PASS on one with it.
func (r Run) Bent() bool {
	return r.Setup == "" && ((r.Cell.Truth == verdict.Pass && r.Got == verdict.Reproduced) ||
		(r.Cell.Truth == verdict.Reproduced && r.Got == verdict.Pass))
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
	given, err := scenario.ParseParams(c.Params)
	if err != nil {
		r.Setup = err.Error()
		return r
	}
	suites, err := scenario.Select("suite:" + c.Suite)
	if err != nil {
		r.Setup = err.Error()
		return r
	}
	nemesis.Enable(seed)
	res := (&runner.Runner{Docker: docker, Builder: b, RunID: id, Params: given}).RunOne(ctx, suites[0], img)
	r.Faults = len(nemesis.Faults())
	nemesis.Disable()
	r.Got, r.Reason = res.Verdict, res.Reason
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
	fmt.Fprintf(&b, "\n%d runs, %d bent (REPRODUCED without the bug, or PASS with it).\n", total, bent)
	for _, r := range runs {
		switch {
		case r.Bent():
			fmt.Fprintf(&b, "- BENT: %s on `%s`, seed %d: %s (%s)\n", r.Cell.Suite, r.Cell.Spec, r.Seed, r.Got, r.Reason)
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

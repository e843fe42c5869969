package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/harp-project/harp/harness/ops/bisect"
	"github.com/harp-project/harp/harness/ops/bugreport"
	"github.com/harp-project/harp/harness/ops/findings"
	"github.com/harp-project/harp/harness/ops/github"
	"github.com/harp-project/harp/harness/ops/report"
	"github.com/harp-project/harp/harness/ops/repro"
)

type findingArgs struct {
	name, reports, repro, bisect, fix, proof, vtc string
}

// cmdReportFinding fills HAProxy's bug report form for one finding from
// the ledger, its evidence, and what else was given: its reproducer, its
// bisect, its fix and the fix's proof. Every input given must be about
// this finding: a bisect of another, or a proof run without the patch,
// is an error, not a report that says more than harp knows.
func cmdReportFinding(ctx context.Context, a findingArgs, out, post string) int {
	if a.proof != "" && a.fix == "" || a.fix != "" && a.proof == "" {
		return fail("report: --fix and --proof go together: the patch and the run that proves it")
	}
	var target github.Target
	var client *github.Client
	if post != "" {
		var err error
		if target, err = github.ParseTarget(post); err != nil {
			return fail("report: --post: %v", err)
		}
		if client, err = github.FromEnv(); err != nil {
			return fail("report: --post: %v", err)
		}
	}
	fs, err := ledger(a.reports)
	if err != nil {
		return fail("report: %v", err)
	}
	f, err := findings.Find(fs, a.name)
	if err != nil {
		return fail("report: %v", err)
	}
	in := bugreport.Inputs{Finding: f}
	if in.Shows, err = showing(a.reports, f); err != nil {
		return fail("report: %v", err)
	}
	var unverified string
	if a.repro != "" {
		m, err := repro.ReadManifest(a.repro)
		if err != nil {
			return fail("report: --repro: %v", err)
		}
		if m.Signature != f.Signature && (m.Signature != "" || m.Finding != f.ID) {
			return fail("report: --repro %s is the reproducer of %s (%s), not of %s (%s)", a.repro, m.Finding, m.Signature, f.ID, f.Signature)
		}
		if in.Repro, err = readRepro(a.repro); err != nil {
			return fail("report: --repro: %v", err)
		}
		unverified = unverifiedNote(m.Verification)
	}
	if a.bisect != "" {
		var o bisect.Outcome
		b, err := os.ReadFile(filepath.Join(a.bisect, "bisect.json"))
		if err == nil {
			err = json.Unmarshal(b, &o)
		}
		if err != nil {
			return fail("report: --bisect %s: %v", a.bisect, err)
		}
		if o.Finding != f.Signature {
			what := "the whole suite's verdict"
			if o.Finding != "" {
				what = "finding " + o.Finding
			}
			return fail("report: --bisect %s bisected %s, not %s", a.bisect, what, f.Signature)
		}
		in.Bisect = &o
	}
	if a.fix != "" {
		patch, err := os.ReadFile(a.fix)
		if err != nil {
			return fail("report: --fix: %v", err)
		}
		proof, err := proofRuns(a.proof)
		if err != nil {
			return fail("report: --proof: %v", err)
		}
		name := filepath.Base(a.fix)
		with := false
		for _, r := range proof.Results {
			with = with || strings.Contains(r.Build, name)
		}
		if !with {
			return fail("report: --proof %s has no build with %s (its builds' specs must name the patch: patch=%s)", a.proof, name, a.fix)
		}
		in.Fix = &bugreport.Fix{Name: name, Patch: string(patch), Proof: proof}
	}
	if a.vtc != "" {
		text, err := os.ReadFile(a.vtc)
		if err != nil {
			return fail("report: --vtc: %v", err)
		}
		if !strings.HasPrefix(strings.TrimSpace(string(text)), "varnishtest ") && !strings.HasPrefix(strings.TrimSpace(string(text)), "vtest ") {
			return fail("report: --vtc %s is not a reg-test (its first line is not `varnishtest \"...\"`)", a.vtc)
		}
		in.RegTest = &bugreport.RegTest{Name: filepath.Base(a.vtc), Text: string(text)}
	}
	md := bugreport.Markdown(in)
	if unverified != "" {
		md = beforeRepro(md, unverified)
	}
	path := out
	if path == "" {
		path = filepath.Join(a.reports, "finding-"+f.ID+".md")
	}
	return writeReport(ctx, path, md, client, target)
}

// showing loads the newest result that shows the finding, with its
// evidence.
func showing(root string, f findings.Finding) (report.Result, error) {
	for i := len(f.Evidence) - 1; i >= 0; i-- {
		runDir, ev := filepath.Split(f.Evidence[i])
		run, err := report.Load(filepath.Join(root, runDir))
		if err != nil {
			continue
		}
		for _, r := range run.Results {
			if r.Evidence != ev {
				continue
			}
			for _, o := range findings.Of(r) {
				if o.Signature == f.Signature && o.Shows {
					return r, nil
				}
			}
		}
	}
	return report.Result{}, fmt.Errorf("finding %s: no run under the reports still holds the evidence of a result that shows it (pruned?)", f.ID)
}

// readRepro reads a reproducer directory's files.
func readRepro(dir string) (map[string]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	files := map[string]string{}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		files[e.Name()] = string(b)
	}
	if _, ok := files["reproduce"]; !ok {
		return nil, fmt.Errorf("%s holds no reproduce script (harp findings repro --out writes one)", dir)
	}
	delete(files, repro.ManifestName) // harp's record, not a file of the reproducer
	return files, nil
}

// unverifiedNote is what the report says of a reproducer harp never
// confirmed ("" for a verified one): its verdicts are the script's word
// alone, and a maintainer must know that before running it.
func unverifiedNote(v repro.Verification) string {
	switch v.State {
	case repro.Verified:
		return ""
	case repro.Skipped:
		return "**Not verified**: this reproducer was written with `--no-verify`: harp never ran it against the builds it judged, so its verdict may not agree with harp's.\n\n"
	}
	why := v.Why
	if why == "" {
		why = "harp's check of it did not pass"
	}
	return fmt.Sprintf("**Not verified**: harp's check of this reproducer failed (%s): do not rely on its verdict.\n\n", strings.TrimSuffix(why, "."))
}

// beforeRepro puts note just before the inlined reproducer (in the steps
// to reproduce, when the form's wording is not found).
func beforeRepro(md, note string) string {
	if i := strings.Index(md, "A standalone reproducer"); i >= 0 {
		return md[:i] + note + md[i:]
	}
	const steps = "### Steps to Reproduce the Behavior\n\n"
	if i := strings.Index(md, steps); i >= 0 {
		return md[:i+len(steps)] + note + md[i+len(steps):]
	}
	return note + md
}

// proofRuns reads the proof: one run, or several (comma-separated: the
// base build's run and the patched build's), their results together.
func proofRuns(dirs string) (report.Run, error) {
	var all report.Run
	var ids []string
	for _, dir := range strings.Split(dirs, ",") {
		run, err := report.LoadSummary(strings.TrimSpace(dir))
		if err != nil {
			return all, err
		}
		ids = append(ids, run.ID)
		all.Results = append(all.Results, run.Results...)
	}
	all.ID = strings.Join(ids, " + ")
	return all, nil
}

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	cerrdefs "github.com/containerd/errdefs"

	"github.com/harp-project/harp/harness/core/progress"
	"github.com/harp-project/harp/harness/core/spec"
	"github.com/harp-project/harp/harness/core/verdict"
	"github.com/harp-project/harp/harness/ops/findings"
	"github.com/harp-project/harp/harness/ops/report"
	"github.com/harp-project/harp/harness/ops/repro"
	"github.com/harp-project/harp/images"
)

// cmdFindingsRepro writes a finding's standalone reproducer to --out and
// checks it: run in the image of a build that shows the finding and of
// one where it is clean (each with socat and python3-minimal added), its
// exit must be harp's verdict there (1, then 0). Exit: 0 verified (or
// --no-verify), 1 it contradicted harp, 2 it could not be verified (it
// said INCONCLUSIVE, or no clean build is known), 3 bad input or harp's
// own failure. Whatever the check found, the files are written, and
// README.md says UNVERIFIED first unless it was verified.
func cmdFindingsRepro(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("findings repro", flag.ContinueOnError)
	root := fs.String("reports", "reports", "reports directory, nightly tree or merged shards holding the finding's runs")
	out := fs.String("out", "", "directory to write the reproducer to (absent or empty)")
	noVerify := fs.Bool("no-verify", false, "write the files without running them in the builds' images (README.md says so)")
	timeout := fs.Duration("timeout", 10*time.Minute, "how long one run of the reproducer may take")
	pos, ok := positional(fs, args)
	if !ok {
		return 3
	}
	if len(pos) != 1 {
		return fail("findings repro: want one finding (its id, a prefix of it, or its signature): harp findings repro F-1a2b3c4d --reports DIR --out DIR")
	}
	if *out == "" {
		return fail("findings repro: --out DIR is needed (the directory to write the reproducer to)")
	}
	if *timeout <= 0 {
		return fail("findings repro: --timeout %s: want a positive duration", *timeout)
	}
	if err := emptyOut(*out); err != nil {
		return fail("findings repro: %v", err)
	}
	ledg, err := ledger(*root)
	if err != nil {
		return fail("findings repro: %v", err)
	}
	f, err := findings.Find(ledg, pos[0])
	if err != nil {
		return fail("findings repro: %v", err)
	}
	if !repro.Has(f) {
		_, err := repro.For(f, report.Result{})
		return fail("findings repro: %v", err)
	}
	rp, r, err := reproFor(*root, f)
	if err != nil {
		return fail("findings repro: %v", err)
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return fail("findings repro: %v", err)
	}
	if *noVerify {
		if err := rp.Write(*out, repro.Verification{State: repro.Skipped, At: time.Now()}); err != nil {
			return fail("findings repro: %v", err)
		}
		fmt.Printf("%s %s: reproducer (%s) written to %s, not verified (--no-verify)\n", f.ID, f.Signature, rp.Lang, *out)
		return 0
	}
	// Written first, so that the script can be copied into the images; a
	// check that never ends leaves it marked unverified.
	if err := rp.Write(*out, repro.Verification{State: repro.Unverified, Why: "harp's check of it did not finish", At: time.Now()}); err != nil {
		return fail("findings repro: %v", err)
	}
	runs, harpErr := verifyRepro(ctx, *root, f, r, *out, *timeout)
	v := repro.Judge(runs, time.Now())
	if harpErr != nil && v.Why == "" {
		v.State, v.Why = repro.Unverified, harpErr.Error()
	}
	if err := rp.Write(*out, v); err != nil {
		return fail("findings repro: %v", err)
	}
	for _, run := range runs {
		fmt.Println("  " + run.Line())
	}
	if v.State == repro.Verified {
		fmt.Printf("%s %s: reproducer (%s) written to %s, VERIFIED: it agrees with harp on %d builds (transcripts in verified.txt)\n", f.ID, f.Signature, rp.Lang, *out, len(runs))
		return 0
	}
	fmt.Printf("%s %s: reproducer (%s) written to %s, UNVERIFIED: %s\n", f.ID, f.Signature, rp.Lang, *out, v.Why)
	for _, run := range runs {
		if run.Err != "" {
			return 3 // harp could not run it: harp's failure, not the script's
		}
	}
	if harpErr != nil {
		failV("findings repro: %v", harpErr)
		return 3
	}
	return v.ExitCode()
}

// emptyOut refuses an --out that holds anything: a reproducer's files
// must be all its own.
func emptyOut(dir string) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("--out %s: %w", dir, err)
	case len(entries) > 0:
		return fmt.Errorf("--out %s is not empty: give a new directory (the reproducer's files must be all its own)", dir)
	}
	return nil
}

// reproFor makes the reproducer from the newest result that shows the
// finding whose evidence a generator accepts.
func reproFor(root string, f findings.Finding) (repro.Repro, report.Result, error) {
	var why []string
	for i := len(f.Evidence) - 1; i >= 0; i-- {
		runDir, ev := filepath.Split(f.Evidence[i])
		run, err := report.Load(filepath.Join(root, runDir))
		if err != nil {
			why = append(why, err.Error())
			continue
		}
		for _, r := range run.Results {
			if r.Evidence != ev || !shows(r, f.Signature) {
				continue
			}
			rp, err := repro.For(f, r)
			if err == nil {
				return rp, r, nil
			}
			why = append(why, err.Error())
		}
	}
	if len(why) == 0 {
		why = append(why, "no run under the reports still holds the evidence of a result that shows it (pruned?)")
	}
	return repro.Repro{}, report.Result{}, fmt.Errorf("%s: no reproducer could be made: %s", f.ID, strings.Join(why, "; "))
}

func shows(r report.Result, sig string) bool {
	for _, o := range findings.Of(r) {
		if o.Signature == sig && o.Shows {
			return true
		}
	}
	return false
}

// verifyRepro runs the reproducer on the build its evidence came from and
// on the first clean build whose result harp still has. err is harp's own
// failure before any run (Docker).
func verifyRepro(ctx context.Context, root string, f findings.Finding, r report.Result, dir string, timeout time.Duration) ([]repro.Run, error) {
	_, builder, err := setup(ctx)
	if err != nil {
		return nil, err
	}
	targets := []report.Result{r}
	if c, ok := cleanResult(root, f); ok {
		targets = append(targets, c)
	} else if len(f.Clean) > 0 {
		progress.Printf("no result of a clean build (%s) is left under %s: the reproducer can only be run where the finding shows", buildList(f.Clean), root)
	}
	var runs []repro.Run
	for _, t := range targets {
		runs = append(runs, runOn(ctx, builder, f, t, dir, timeout))
	}
	return runs, nil
}

// cleanResult is the result, in its newest run, of a build where the
// finding was looked for and not seen (its suite's result there).
func cleanResult(root string, f findings.Finding) (report.Result, bool) {
	for _, b := range f.Clean {
		run, err := report.LoadSummary(filepath.Join(root, b.LastRun))
		if err != nil {
			continue
		}
		for _, r := range run.Results {
			if r.Suite != f.Suite || (r.Name != b.Name && r.Build != b.Name) {
				continue
			}
			if v, _ := findings.Verdict(r, f.Signature); v == verdict.Pass && r.Image != "" {
				return r, true
			}
		}
	}
	return report.Result{}, false
}

// runOn runs the reproducer in one build's image with the tools added.
func runOn(ctx context.Context, b *images.Builder, f findings.Finding, r report.Result, dir string, timeout time.Duration) repro.Run {
	want, _ := findings.Verdict(r, f.Signature)
	run := repro.Run{Build: r.Name, Spec: r.Build, Image: r.Image, Harp: want}
	if run.Build == "" {
		run.Build = r.Build
	}
	img, err := buildImage(ctx, b, r)
	if err != nil {
		run.Err = err.Error()
		return run
	}
	run.Image = img
	if run.Tools, err = b.WithTools(ctx, img); err != nil {
		run.Err = err.Error()
		return run
	}
	done := progress.Start("running the reproducer on %s (harp: %s) in %s", run.Build, want, run.Tools)
	start := time.Now()
	out, code, err := b.RunReproducer(ctx, run.Tools, dir, timeout)
	run.Took = time.Since(start)
	done(err)
	run.Output, run.Exit, run.Said = out, code, repro.SaidLine(out)
	if err != nil {
		run.Err = err.Error()
	}
	return run
}

// buildImage is the result's image: the one recorded when it is still
// there, else the build's spec built again, if it gives the same version.
func buildImage(ctx context.Context, b *images.Builder, r report.Result) (string, error) {
	if r.Image != "" {
		_, err := b.Docker.ImageInspect(ctx, r.Image)
		if err == nil {
			return r.Image, nil
		}
		if !cerrdefs.IsNotFound(err) {
			return "", fmt.Errorf("image %s: %w", r.Image, err)
		}
	}
	s, err := spec.Parse(r.Build)
	if err != nil {
		return "", fmt.Errorf("the image %s is gone and its build spec %q does not parse: %w", r.Image, r.Build, err)
	}
	img, err := b.Ensure(ctx, s)
	if err != nil {
		return "", err
	}
	if img.Version != r.Version {
		return "", fmt.Errorf("the image %s is gone, and %s now gives HAProxy %s, not the %s harp ran", r.Image, r.Build, img.Version, r.Version)
	}
	return img.Tag, nil
}

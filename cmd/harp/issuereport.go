package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/harp-project/harp/harness/core/suite"
	"github.com/harp-project/harp/harness/ops/github"
	"github.com/harp-project/harp/harness/ops/report"
)

// cmdReport writes the Markdown for an upstream issue from a run's
// results, and with --post adds it to the issue as a comment.
func cmdReport(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	issue := fs.String("issue", "", "suite id or upstream issue (3517, haproxy/haproxy#3517)")
	property := fs.String("property", "", "a conformance property's suite id (conf-reload-keeps-entries): a finding with no issue number")
	runDir := fs.String("run", "reports/latest", "run directory to report on")
	out := fs.String("out", "", "file to write (default: issue-<N>.md in the run directory)")
	post := fs.String("post", "", "post it as a comment on owner/repo#N (token from GITHUB_TOKEN or GH_TOKEN)")
	var fa findingArgs
	fs.StringVar(&fa.name, "finding", "", "a finding's id or signature (harp findings): HAProxy's bug report form, filled")
	fs.StringVar(&fa.reports, "reports", "reports", "with --finding: the reports the ledger reads")
	fs.StringVar(&fa.repro, "repro", "", "with --finding: a reproducer directory (harp findings repro --out) to inline")
	fs.StringVar(&fa.bisect, "bisect", "", "with --finding: a bisect run directory (harp bisect --finding) naming its first bad commit")
	fs.StringVar(&fa.fix, "fix", "", "with --finding: a patch that fixes it (--proof: the run that proves it)")
	fs.StringVar(&fa.vtc, "vtc", "", "with --finding: the finding's reg-test (.vtc): the short form, the reg-test first, at most 200 lines")
	fs.StringVar(&fa.proof, "proof", "", "with --fix: a run of every suite on the same base with and without the patch (or two runs, comma-separated)")
	if !flags(fs, args) {
		return 3
	}
	if fa.name != "" {
		if *issue != "" || *property != "" {
			return fail("report: --finding reports one finding: leave out --issue and --property")
		}
		return cmdReportFinding(ctx, fa, *out, *post)
	}
	switch {
	case *issue == "" && *property == "":
		return fail("report: --issue, --property or --finding is required (e.g. --issue 3517, --property conf-reload-keeps-entries, --finding F-1358e201)")
	case *issue != "" && *property != "":
		return fail("report: --issue and --property name one suite each: give one")
	}
	var target github.Target
	var client *github.Client
	if *post != "" { // check before doing anything, so a bad target or token fails fast
		var err error
		if target, err = github.ParseTarget(*post); err != nil {
			return fail("report: --post: %v", err)
		}
		if client, err = github.FromEnv(); err != nil {
			return fail("report: --post: %v", err)
		}
	}
	run, err := report.Load(*runDir)
	if err != nil {
		return fail("report: %v", err)
	}
	var md, name string
	if *property != "" {
		if s, ok := suite.ByID(*property); !ok || !suite.Conformance(s) {
			return fail("report: %q is not a conformance property (`harp suites` lists them, labelled area:conformance)", *property)
		}
		md, err = report.PropertyMarkdown(run, *property)
		name = "property-" + filepath.Base(*property) + ".md"
	} else {
		md, err = report.IssueMarkdown(run, *issue)
		name = "issue-" + filepath.Base(report.IssueID(*issue)) + ".md"
	}
	if err != nil {
		return fail("report: %v", err)
	}
	path := *out
	if path == "" {
		path = filepath.Join(*runDir, name)
	}
	return writeReport(ctx, path, md, client, target)
}

// writeReport writes a report, prints it, and posts it when a client is
// given.
func writeReport(ctx context.Context, path, md string, client *github.Client, target github.Target) int {
	if err := os.WriteFile(path, []byte(md), 0o644); err != nil {
		return fail("report: %v", err)
	}
	fmt.Print(md)
	fmt.Fprintf(os.Stderr, "harp: wrote %s\n", path)
	if client != nil {
		url, err := client.Comment(ctx, target, md)
		if err != nil {
			return fail("report: %v", err)
		}
		fmt.Fprintf(os.Stderr, "harp: posted %s\n", url)
	}
	return 0
}

package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/harp-project/harp/harness/ops/findings"
)

// cmdFindings is the findings ledger over a reports tree, and its
// subcommands: mark (the user's status), repro (a standalone reproducer).
func cmdFindings(ctx context.Context, args []string) int {
	if len(args) > 0 {
		switch args[0] {
		case "mark":
			return cmdFindingsMark(args[1:])
		case "repro":
			return cmdFindingsRepro(ctx, args[1:])
		}
	}
	fs := flag.NewFlagSet("findings", flag.ContinueOnError)
	root := fs.String("reports", "reports", "reports directory, nightly tree or merged shards to read")
	asJSON := fs.Bool("json", false, "print a JSON array, one object per finding")
	if !flags(fs, args) {
		return 3
	}
	fs2, err := ledger(*root)
	if err != nil {
		return fail("findings: %v", err)
	}
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if fs2 == nil {
			fs2 = []findings.Finding{}
		}
		if err := enc.Encode(fs2); err != nil {
			return fail("findings: %v", err)
		}
		return 0
	}
	printFindings(os.Stdout, fs2)
	return 0
}

func ledger(root string) ([]findings.Finding, error) {
	runs, err := findings.Scan(root)
	if err != nil {
		return nil, err
	}
	marks, err := findings.LoadMarks(root)
	if err != nil {
		return nil, err
	}
	return findings.Ledger(runs, marks), nil
}

func printFindings(w io.Writer, fs []findings.Finding) {
	if len(fs) == 0 {
		fmt.Fprintln(w, "no findings: no run under these reports reproduced a check or met a crash")
		return
	}
	for _, f := range fs {
		status := f.Status.State
		if f.Status.Ref != "" {
			status += " " + f.Status.Ref
		}
		fmt.Fprintf(w, "%s  %-9s %s\n", f.ID, status, f.Signature)
		if f.Regressed {
			fmt.Fprintf(w, "    SEEN AGAIN after it was marked %s on %s\n", status, f.Status.At.Format(time.DateOnly))
		}
		fmt.Fprintf(w, "    %s\n", f.Example)
		fmt.Fprintf(w, "    shows: %s\n", buildList(f.Shows))
		if len(f.Clean) > 0 {
			fmt.Fprintf(w, "    clean: %s\n", buildList(f.Clean))
		}
		fmt.Fprintf(w, "    first seen %s (%s, %s); last seen %s (%s, %s)\n", f.FirstSeen.At.UTC().Format(time.DateTime), f.FirstSeen.Run, f.FirstSeen.Build,
			f.LastSeen.At.UTC().Format(time.DateTime), f.LastSeen.Run, f.LastSeen.Build)
		if len(f.Evidence) > 0 {
			ev := f.Evidence
			more := ""
			if len(ev) > 3 {
				more = fmt.Sprintf(" and %d more", len(ev)-3)
				ev = ev[len(ev)-3:]
			}
			fmt.Fprintf(w, "    evidence: %s%s\n", strings.Join(ev, " "), more)
		}
	}
}

func buildList(bs []findings.Build) string {
	var parts []string
	for _, b := range bs {
		parts = append(parts, fmt.Sprintf("%s (%d)", b.Name, b.Runs))
	}
	return strings.Join(parts, ", ")
}

// cmdFindingsMark records the user's status of a finding.
func cmdFindingsMark(args []string) int {
	fs := flag.NewFlagSet("findings mark", flag.ContinueOnError)
	root := fs.String("reports", "reports", "reports directory the status file lies in")
	pos, ok := positional(fs, args)
	if !ok {
		return 3
	}
	if len(pos) < 2 || len(pos) > 3 {
		return fail("findings mark: want SIG STATUS [REF] (e.g. mark F-1a2b3c4d reported haproxy/haproxy#3600, mark F-1a2b3c4d fixed-in v3.4.2)")
	}
	name, state, ref := pos[0], pos[1], ""
	if len(pos) == 3 {
		ref = pos[2]
	}
	if err := findings.CheckMark(state, ref); err != nil {
		return fail("findings mark: %v", err)
	}
	fs2, err := ledger(*root)
	if err != nil {
		return fail("findings mark: %v", err)
	}
	f, err := findings.Find(fs2, name)
	if err != nil {
		return fail("findings mark: %v", err)
	}
	marks, err := findings.LoadMarks(*root)
	if err != nil {
		return fail("findings mark: %v", err)
	}
	marks[f.Signature] = findings.Status{State: state, Ref: ref, At: time.Now().UTC()}
	if err := findings.SaveMarks(*root, marks); err != nil {
		return fail("findings mark: %v", err)
	}
	fmt.Printf("%s %s: %s %s\n", f.ID, f.Signature, state, ref)
	return 0
}

// positional parses a subcommand's flags around its positional arguments
// (mark SIG STATUS REF --reports DIR, or the flags first).
func positional(fs *flag.FlagSet, args []string) (pos []string, ok bool) {
	for {
		i := 0
		for i < len(args) && !strings.HasPrefix(args[i], "-") {
			i++
		}
		pos = append(pos, args[:i]...)
		args = args[i:]
		if len(args) == 0 {
			return pos, true
		}
		fs.SetOutput(os.Stderr)
		if err := fs.Parse(args); err != nil {
			helpAsked = errors.Is(err, flag.ErrHelp)
			return nil, false
		}
		args = fs.Args()
	}
}

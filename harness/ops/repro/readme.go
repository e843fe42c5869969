package repro

import (
	"fmt"
	"strings"
	"time"

	"github.com/harp-project/harp/harness/ops/findings"
)

// README is the directory's README.md: the finding, how to run the
// script, what it does, the builds harp saw it on and clean on, and what
// harp's check of the script said (an unverified one says so first).
func (r Repro) README(v Verification) string {
	f := r.Finding
	var b strings.Builder
	fmt.Fprintf(&b, "# Reproducer of %s: %s\n\n", f.ID, f.Signature)
	switch v.State {
	case Verified:
		var lines []string
		for _, run := range v.Runs {
			lines = append(lines, fmt.Sprintf("%s on %s", run.Verdict(), run.Build))
		}
		fmt.Fprintf(&b, "**Verified** by harp on %s: it agrees with harp's verdicts (%s); the transcripts are in [verified.txt](verified.txt).\n\n",
			v.At.UTC().Format(time.DateOnly), strings.Join(lines, ", "))
	case Skipped:
		b.WriteString("**Not verified**: written with `--no-verify`, so harp did not run it in the builds' images; it may not agree with harp's verdicts.\n\n")
	default:
		fmt.Fprintf(&b, "**UNVERIFIED**: harp's check of this script failed: %s. Do not rely on its verdict", v.Why)
		if len(v.Runs) > 0 {
			b.WriteString("; the transcripts are in [verified.txt](verified.txt)")
		}
		b.WriteString(".\n\n")
	}
	fmt.Fprintf(&b, "%s.\n\nWhat harp saw: %s\n\n", strings.TrimSuffix(f.Title, "."), f.Example)
	if r.Reproduces != "" {
		fmt.Fprintf(&b, "This script reproduces %s.\n\n", r.Reproduces)
	}
	b.WriteString("## Run it\n\n    ./reproduce /usr/sbin/haproxy\n\n")
	fmt.Fprintf(&b, "The first argument is the haproxy binary to test. It needs %s; not harp, Go or Docker. "+
		"It starts haproxy itself in master-worker mode (`-W`), in a temporary directory, and kills every haproxy it started when it exits.\n\n", r.Needs)
	b.WriteString("| exit | prints | meaning |\n|---|---|---|\n")
	b.WriteString("| 1 | REPRODUCED | the finding shows on this binary |\n")
	b.WriteString("| 0 | PASS | it does not |\n")
	b.WriteString("| 2 | INCONCLUSIVE | a precondition was not met (haproxy -c accepts the broken config, a socket never appears, ...), or the script could not run (a missing tool, a binary that is not haproxy, no temporary directory): the line says which |\n")
	b.WriteString("| 3 | usage | no binary given |\n\n")
	b.WriteString("## What it does\n\n")
	for i, s := range r.Does {
		fmt.Fprintf(&b, "%d. %s\n", i+1, s)
	}
	b.WriteString("\n## Builds\n\n")
	fmt.Fprintf(&b, "- Shows it: %s\n", builds(f.Shows))
	if len(f.Clean) > 0 {
		fmt.Fprintf(&b, "- Clean (looked for, not seen): %s\n", builds(f.Clean))
	} else {
		b.WriteString("- Clean: no build harp ran showed it absent\n")
	}
	fmt.Fprintf(&b, "- Made from the evidence of %s (`%s`).\n", r.From.Build, r.From.Evidence)
	if len(v.Runs) > 0 {
		b.WriteString("\n## harp's check\n\n")
		for _, run := range v.Runs {
			fmt.Fprintf(&b, "- %s\n", run.Line())
		}
	}
	b.WriteString("\n## Files\n\n")
	for _, file := range r.Files {
		fmt.Fprintf(&b, "- `%s`: %s\n", file.Name, describe(file.Name))
	}
	if len(v.Runs) > 0 {
		b.WriteString("- `verified.txt`: harp's runs of the script in each build's image, whole\n")
	}
	fmt.Fprintf(&b, "- `%s`: the finding and harp's check, for `harp report --finding %s --repro DIR`\n", ManifestName, f.ID)
	b.WriteString("\nharp itself: `harp findings --reports DIR` lists the finding; its suite runs with `" + suiteCommand(f) + "`.\n")
	return b.String()
}

func builds(bs []findings.Build) string {
	var out []string
	for _, b := range bs {
		s := b.Name
		if b.Spec != "" && b.Spec != b.Name {
			s += fmt.Sprintf(" (`%s`)", b.Spec)
		}
		out = append(out, s)
	}
	return strings.Join(out, ", ")
}

func describe(name string) string {
	switch {
	case name == "reproduce":
		return "the script"
	case name == "haproxy.cfg":
		return LocalNote
	case strings.HasPrefix(name, "broken-"):
		return "the config harp reloaded that cannot load, localized the same way"
	}
	return "a file the config reads"
}

func suiteCommand(f findings.Finding) string {
	suite := f.Suite
	if suite == "" {
		suite = "<suite>"
	}
	return fmt.Sprintf("make test-%s HAPROXY=<build>", suite)
}

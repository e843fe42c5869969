package report

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/harp-project/harp/harness/core/verdict"
)

// GitHub refuses comments over 65536 characters; issue reports stay below.
const maxIssueReport = 60000

// IssueID is the suite id an --issue argument names: "3517" for
// "haproxy/haproxy#3517", "#3517" or "3517".
func IssueID(issue string) string {
	if i := strings.LastIndex(issue, "#"); i >= 0 {
		return issue[i+1:]
	}
	return issue
}

// ForIssue keeps the results of one suite, named by its id ("3517") or by
// its upstream issue ("haproxy/haproxy#3517", "#3517").
func ForIssue(run Run, issue string) ([]Result, error) {
	want := IssueID(issue)
	var out []Result
	have := map[string]bool{}
	for _, r := range run.Results {
		have[r.Suite] = true
		if r.Suite == want || r.Upstream == issue || strings.HasSuffix(r.Upstream, "#"+want) {
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		var ids []string
		for id := range have {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		return nil, fmt.Errorf("run %s has no results for issue %s (it has: %s)", run.ID, issue, strings.Join(ids, ", "))
	}
	return out, nil
}

// IssueMarkdown writes a document to paste into (or post on) the upstream
// issue: what was tested, how to reproduce it with harp, the verdicts with
// their counts, and the transcript of the first violation, trimmed.
func IssueMarkdown(run Run, issue string) (string, error) { return markdown(run, issue, false) }

// PropertyMarkdown is IssueMarkdown for a conformance property (a suite
// labelled area:conformance, which the caller checks): a finding with no
// issue yet, so it says which property, which builds violate it and with
// what evidence.
func PropertyMarkdown(run Run, id string) (string, error) { return markdown(run, id, true) }

func markdown(run Run, issue string, property bool) (string, error) {
	rs, err := ForIssue(run, issue)
	if err != nil {
		return "", err
	}
	first := rs[0]
	var b strings.Builder
	if property {
		var bad []string
		for _, r := range rs {
			if r.Verdict == verdict.Reproduced {
				bad = append(bad, "`"+r.Build+"`")
			}
		}
		fmt.Fprintf(&b, "### harp: conformance property `%s`: %s\n\n", first.Suite, first.Title)
		if len(bad) > 0 {
			fmt.Fprintf(&b, "The property is **violated** by %s (%d of %d builds tested). No issue names this yet: the table says which variant failed and how; the steps, configuration, `haproxy -vv` and the transcript of the first violation follow.\n\n", strings.Join(bad, ", "), len(bad), len(rs))
		} else {
			fmt.Fprintf(&b, "No build tested violates the property (%d builds).\n\n", len(rs))
		}
	} else {
		fmt.Fprintf(&b, "### harp: %s on %d build(s)\n\n", first.Title, len(rs))
	}
	fmt.Fprintf(&b, "Tested by [harp](https://github.com/harp-project/harp) (run `%s`, %s): each build ran in a container, master-worker (`-W`), driven through the master CLI.\n\n",
		run.ID, run.Started.UTC().Format(time.RFC3339))

	b.WriteString("| build | HAProxy version | verdict | trials | reason |\n|---|---|---|---|---|\n")
	var specs []string
	for _, r := range rs {
		fmt.Fprintf(&b, "| `%s` | %s | **%s** | %d of %d %s violated the expectation | %s |\n",
			r.Build, r.Version, r.Verdict, r.TrialsViolated, r.TrialsRun, noun(r), mdCell(r.Reason))
		specs = append(specs, r.Build)
	}
	b.WriteString("\n")
	origins := 0
	for _, r := range rs {
		if r.Origin != "" {
			fmt.Fprintf(&b, "- `%s`: %s\n", r.Build, r.Origin)
			origins++
		}
	}
	if origins > 0 {
		b.WriteString("\n")
	}
	if len(first.Steps) > 0 {
		b.WriteString("**Steps** (the suite's setup, trigger and expectation):\n\n")
		for _, s := range first.Steps {
			fmt.Fprintf(&b, "1. %s\n", s)
		}
		b.WriteString("\n")
	}
	if first.IsCrashRow() {
		fmt.Fprintf(&b, "**Reproduce** with harp (the suites that met the crashes):\n\n```\n%s\n```\n\n", Reproduce(first))
	} else {
		fmt.Fprintf(&b, "**Reproduce** with harp:\n\n```\nmake test-%s HAPROXY='%s'\n```\n\n(or `bin/harp run --suites 'suite:%s' --haproxy '...'`, whose exit status is 1 when the issue reproduced, 0 when it did not, 2 when inconclusive)\n\n",
			first.Suite, strings.Join(specs, " "), first.Suite)
	}

	// One configuration block per distinct rendered configuration.
	var configs []string
	byConfig := map[string][]string{}
	for _, r := range rs {
		if r.Config == "" {
			continue
		}
		if _, ok := byConfig[r.Config]; !ok {
			configs = append(configs, r.Config)
		}
		byConfig[r.Config] = append(byConfig[r.Config], r.Name)
	}
	// Blocks are cut at line boundaries so that the whole document fits a
	// GitHub comment; the evidence directory keeps everything.
	budget := maxIssueReport - b.Len()
	evidence := firstViolation(rs, budget/3)
	perBlock := (budget - len(evidence)) / max(1, len(configs)+len(rs))
	for _, c := range configs {
		fmt.Fprintf(&b, "<details><summary>Configuration (%s)</summary>\n\n```\n%s\n```\n</details>\n\n", strings.Join(byConfig[c], ", "), fit(strings.TrimSpace(c), perBlock-120))
	}
	for _, r := range rs {
		if r.VV != "" {
			fmt.Fprintf(&b, "<details><summary>haproxy -vv: %s</summary>\n\n```\n%s\n```\n</details>\n\n", r.Name, fit(strings.TrimSpace(r.VV), perBlock-120))
		}
	}
	b.WriteString(evidence)
	for _, r := range rs {
		if len(r.Crashes) > 0 && b.Len() < maxIssueReport-2000 {
			fmt.Fprintf(&b, "\n#### Crashes on %s\n\n", r.Name)
			full, same := distinctCrashes(r.Crashes)
			b.WriteString(CrashMarkdown(full, (maxIssueReport-b.Len())/(2*len(full))))
			if len(same) > 0 {
				fmt.Fprintf(&b, "Also died the same way (same signal and signature): %s.\n\n", strings.Join(same, ", "))
			}
		}
	}
	return b.String(), nil
}

// distinctCrashes keeps the first crash of each signal and signature (a
// crash without a signature is its own), and names the others.
func distinctCrashes(cs []verdict.Crash) (first []verdict.Crash, same []string) {
	seen := map[string]bool{}
	for _, c := range cs {
		key := c.Signal + "\x00" + c.Signature
		if c.Signature == "" {
			key += fmt.Sprintf("\x00%s\x00%d", c.Node, c.PID)
		}
		if seen[key] {
			same = append(same, fmt.Sprintf("%s %d of %s", c.ProcessKind(), c.PID, c.Node))
			continue
		}
		seen[key] = true
		first = append(first, c)
	}
	return first, same
}

// fit keeps the whole lines of s that fit in n bytes, saying what was cut.
func fit(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const note = "\n[cut to fit a GitHub comment: %d more lines in the evidence directory]"
	lines := strings.Split(s, "\n")
	size, keep := 0, 0
	for keep < len(lines) && size+len(lines[keep])+1 <= n-len(note)-8 {
		size += len(lines[keep]) + 1
		keep++
	}
	return strings.Join(lines[:keep], "\n") + fmt.Sprintf(note, len(lines)-keep)
}

func noun(r Result) string {
	if r.Noun != "" {
		return r.Noun
	}
	return "trials"
}

// firstViolation shows the first violating trial: what was observed and
// the runtime exchanges that led to it (polls folded, the last ones kept).
func firstViolation(rs []Result, budget int) string {
	for _, r := range rs {
		if r.Verdict != verdict.Reproduced {
			continue
		}
		for _, t := range r.Trials {
			if t.Violation == "" {
				continue
			}
			var b strings.Builder
			fmt.Fprintf(&b, "**First violation**: %s, %s %d: %s\n\n", r.Name, strings.TrimSuffix(noun(r), "s"), t.N, t.Violation)
			for _, n := range t.Notes {
				fmt.Fprintf(&b, "- %s\n", n)
			}
			for _, blk := range t.Blocks {
				fmt.Fprintf(&b, "\n%s:\n\n```\n%s\n```\n", blk.Title, strings.TrimRight(blk.Text, "\n"))
			}
			ex := Trim(t.Exchanges)
			const keep = 12
			if len(ex) > 0 {
				cut := max(0, len(ex)-keep)
				fmt.Fprintf(&b, "\n<details><summary>Runtime transcript up to the violation (%d of %d exchanges, polls folded)</summary>\n\n```\n", len(ex)-cut, len(ex))
				for _, e := range ex[cut:] {
					fmt.Fprintf(&b, "%s %s> %s\n", e.At.UTC().Format("15:04:05.000"), e.Target, e.Command)
					if e.Err != "" {
						fmt.Fprintf(&b, "(error: %s)\n", e.Err)
					}
					out := strings.Split(strings.TrimRight(e.Output, "\n"), "\n")
					if len(out) > 25 {
						out = append(out[:25], fmt.Sprintf("[%d more lines]", len(out)-25))
					}
					if o := strings.Join(out, "\n"); o != "" {
						b.WriteString(o + "\n")
					}
				}
				b.WriteString("```\n</details>\n")
			}
			out := b.String() + "\n"
			if len(out) > budget {
				// Keep the head (what was observed) and the transcript's end.
				head, transcript, ok := strings.Cut(out, "\n<details><summary>Runtime transcript")
				if ok {
					body := strings.TrimSuffix(strings.TrimRight(transcript, "\n"), "```\n</details>")
					open, rest, _ := strings.Cut(body, "```\n")
					out = fit(head, budget/2) + "\n<details><summary>Runtime transcript" + open + "```\n" + fitTail(rest, budget/2-len(open)-40) + "```\n</details>\n\n"
				} else {
					out = fit(out, budget) + "\n"
				}
			}
			return out
		}
	}
	return ""
}

// fitTail keeps the last whole lines of s that fit in n bytes.
func fitTail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	size, from := 0, len(lines)
	for from > 0 && size+len(lines[from-1])+1 <= n-80 {
		size += len(lines[from-1]) + 1
		from--
	}
	return fmt.Sprintf("[%d earlier lines cut to fit a GitHub comment]\n", from) + strings.Join(lines[from:], "\n") + "\n"
}

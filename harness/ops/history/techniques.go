package history

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// Techniques harp has today that reach a bug a plain black-box run cannot
// (issue #42): the asan flavour, make defines, any command line, /proc
// reads, allocation-failure injection, a moved clock, more threads than
// CPUs (or 16 on a 16-core machine), long or repeated runs, harp's peers
// client and raw CLI bytes.
var Techniques = []string{"asan", "make-define", "exec", "proc", "fail-alloc", "clock", "threads", "threads16", "long-run", "peers-client", "cli"}

// Technique is a fix judged again against what harp can do: observable
// with Tags ("proc", "exec+proc"), or not, with why no technique would
// do ("none").
type Technique struct {
	Commit     string
	Observable bool
	Tags       string
	Why        string
}

// ReadTechniques reads the techniques file: commit, observable |
// not-observable, tags joined by + (or none), why; # starts a comment. A
// malformed line is an error naming it.
func ReadTechniques(r io.Reader) (map[string]Technique, error) {
	out := map[string]Technique{}
	err := readRows(r, func(n int, id string, f []string) error {
		if len(f) != 4 {
			return fmt.Errorf("line %d: %d fields, want commit, verdict, techniques, why", n, len(f))
		}
		t := Technique{Commit: id, Tags: strings.TrimSpace(f[2]), Why: strings.TrimSpace(f[3])}
		switch v := strings.TrimSpace(f[1]); v {
		case "observable":
			t.Observable = true
		case "not-observable":
		default:
			return fmt.Errorf("line %d: verdict %q, want observable or not-observable", n, v)
		}
		switch {
		case t.Why == "":
			return fmt.Errorf("line %d: %s has no reason", n, t.Commit)
		case t.Tags == "none" && t.Observable:
			return fmt.Errorf("line %d: %s is observable with no technique", n, t.Commit)
		case t.Tags != "none" && !t.Observable:
			return fmt.Errorf("line %d: %s is not observable, yet names techniques %q", n, t.Commit, t.Tags)
		}
		if t.Tags != "none" {
			for _, tag := range strings.Split(t.Tags, "+") {
				if !slices.Contains(Techniques, tag) {
					return fmt.Errorf("line %d: %s: no technique %q (one of %s, or none)", n, t.Commit, tag, strings.Join(Techniques, ", "))
				}
			}
		}
		if _, dup := out[t.Commit]; dup {
			return fmt.Errorf("line %d: %s judged twice", n, t.Commit)
		}
		out[t.Commit] = t
		return nil
	})
	return out, err
}

// WithTechniques judges again the fixes a technique row names: one found
// observable becomes so, its why the technique's; one that stays out of
// reach says why no technique would do. A row whose fix has no judgement,
// or was judged observable already, is an error: the two files disagree.
func WithTechniques(js map[string]Judgement, ts map[string]Technique) (map[string]Judgement, error) {
	out := make(map[string]Judgement, len(js))
	for id, j := range js {
		out[id] = j
	}
	for id, t := range ts {
		j, ok := out[id]
		if !ok {
			return nil, fmt.Errorf("techniques: %s has no judgement", id)
		}
		if j.Observable {
			return nil, fmt.Errorf("techniques: %s was judged observable already", id)
		}
		j.Technique, j.Why = t.Tags, t.Why
		j.Observable = t.Observable
		out[id] = j
	}
	return out, nil
}

// Package findings turns runs into a ledger of findings: every check a
// build failed (a REPRODUCED cell's failed checks) and every HAProxy crash,
// each under a stable signature, deduplicated across cells, builds and
// runs, with the builds that show it, the builds where it was looked for
// and not seen, and the status its user keeps beside the reports.
package findings

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/harp-project/harp/harness/core/verdict"
	"github.com/harp-project/harp/harness/ops/report"
)

// Kinds of findings.
const (
	KindCheck    = "check"    // a named check of a suite failed
	KindProperty = "property" // a suite that names no checks was violated
	KindCrash    = "crash"    // an HAProxy process died
)

// Finding is one bug as harp saw it, over every run scanned.
type Finding struct {
	ID        string `json:"id"`        // F- and the signature's hash, short enough to type
	Signature string `json:"signature"` // conf-failed-reload/master-survives, crash/master/SIGSEGV/f <- g
	Kind      string `json:"kind"`
	Suite     string `json:"suite"`
	Check     string `json:"check,omitempty"` // the check id, or a crash's signal and frames
	Title     string `json:"title"`           // the suite's title, or what died
	Example   string `json:"example"`         // the first failure's text
	FirstSeen Seen   `json:"first_seen"`
	LastSeen  Seen   `json:"last_seen"`
	// Shows are the builds that showed it; Clean the builds where it was
	// looked for and not seen (the check held, the suite passed, or the
	// suite ran and no such crash happened).
	Shows    []Build  `json:"shows"`
	Clean    []Build  `json:"clean,omitempty"`
	Evidence []string `json:"evidence"` // run directories' evidence, relative to the scanned root
	Status   Status   `json:"status"`
	// Regressed: seen in a run that started after it was marked fixed.
	Regressed bool `json:"seen_after_fix,omitempty"`
	// Formerly are the signatures the same check had under the suite its
	// suite was split from (report.SplitFrom), in runs recorded before the
	// split: their observations are this finding's.
	Formerly []string `json:"formerly,omitempty"`
}

// Seen is one sighting: when, in which run, on which build.
type Seen struct {
	At    time.Time `json:"at"`
	Run   string    `json:"run"`
	Build string    `json:"build"`
}

// Build is one build's record for a finding.
type Build struct {
	Name    string `json:"build"`
	Version string `json:"haproxy_version"`
	Spec    string `json:"build_spec"`
	Runs    int    `json:"runs"`     // results that showed it (Shows) or where it was absent (Clean)
	LastRun string `json:"last_run"` // the newest run directory
}

// ID is the short id of a signature.
func ID(signature string) string {
	h := sha256.Sum256([]byte(signature))
	return "F-" + hex.EncodeToString(h[:4])
}

// Observation is what one result says of one signature.
type Observation struct {
	Signature, Kind, Suite, Check, Title, Example string
	Shows                                         bool // false: looked for and absent
	Evidence                                      string
}

// Is says whether the observation is of the finding sig: the same
// signature, or the same check seen by the suite sig's suite was split
// from (report.SplitFrom), in a run recorded before the split.
func (o Observation) Is(sig string) bool {
	if o.Signature == sig {
		return true
	}
	suite := SuiteOf(sig)
	return o.Kind == KindCheck && suite != "" && report.Answers(o.Suite, suite) && o.Signature == o.Suite+"/"+strings.TrimPrefix(sig, suite+"/")
}

// Of lists what one result says: each failed check (or the property, for
// a suite that names no checks) and each crash it met, as shown; each
// check that held and was never failed, as absent. A result that decided
// nothing (INCONCLUSIVE, ERROR) shows nothing and clears nothing, except
// crashes: a crash is a finding whatever verdict its suite got.
func Of(r report.Result) []Observation {
	if r.IsCrashRow() {
		return nil // its crashes are its suites' own, read from them
	}
	var out []Observation
	add := func(o Observation) {
		o.Suite = r.Suite
		if o.Title == "" {
			o.Title = r.Title
		}
		o.Evidence = r.Evidence
		out = append(out, o)
	}
	switch r.Verdict {
	case verdict.Reproduced, verdict.Pass:
		named := false
		for _, c := range r.Checks {
			named = true
			sig := r.Suite + "/" + c.ID
			switch {
			case c.Failed > 0 && r.Verdict == verdict.Reproduced:
				add(Observation{Signature: sig, Kind: KindCheck, Check: c.ID, Example: c.Example, Shows: true})
			case c.Failed == 0 && c.Held > 0:
				add(Observation{Signature: sig, Kind: KindCheck, Check: c.ID})
			}
		}
		if !named {
			add(Observation{Signature: r.Suite, Kind: KindProperty, Example: firstReason(r.Reason), Shows: r.Verdict == verdict.Reproduced})
		}
	}
	seen := map[string]bool{}
	for _, c := range r.Crashes {
		sig := CrashSignature(c)
		if seen[sig] {
			continue
		}
		seen[sig] = true
		add(Observation{Signature: sig, Kind: KindCrash, Check: strings.TrimPrefix(sig, "crash/"), Title: crashTitle(c),
			Example: fmt.Sprintf("%s %d of %s: %s", c.ProcessKind(), c.PID, c.Node, c.Signal), Shows: true})
	}
	return out
}

// CrashSignature names a crash by what died, how, and its top frames:
// the same crash reads the same in every cell and run.
func CrashSignature(c verdict.Crash) string {
	how := c.Signal
	if how == "" {
		how = fmt.Sprintf("exit %d", c.Code)
	}
	where := c.Signature
	if c.ASanSummary != "" {
		where = c.ASanSummary
	}
	if where == "" {
		where = "no stack"
	}
	return "crash/" + c.ProcessKind() + "/" + how + "/" + where
}

func crashTitle(c verdict.Crash) string {
	return fmt.Sprintf("the %s dies (%s)", c.ProcessKind(), c.Signal)
}

func firstReason(s string) string {
	first, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return first
}

// Scanned is a run and where it lies under the scanned root.
type Scanned struct {
	Dir string // relative to the root
	Run report.Run
}

// Ledger folds runs into findings, oldest run first. Crashes clear only
// where the suites that met them ran again with a working crash watch.
func Ledger(runs []Scanned, marks Marks) []Finding {
	sort.SliceStable(runs, func(i, j int) bool { return runs[i].Run.Started.Before(runs[j].Run.Started) })
	by := map[string]*Finding{}
	shows := map[string]map[string]*Build{}
	clean := map[string]map[string]*Build{}
	crashSuites := map[string]map[string]bool{} // crash signature -> suites that met it
	type cleanRun struct {
		dir string
		r   report.Result
	}
	var watched []cleanRun // results whose crash watch saw every node
	renamed := splitRenames(runs)
	formerly := map[string][]string{} // new signature -> old ones joined into it
	oldTitle := map[string]bool{}     // findings titled by a result from before the split
	for old, sig := range renamed {
		formerly[sig] = append(formerly[sig], old)
	}
	for _, sc := range runs {
		for _, r := range sc.Run.Results {
			if !r.IsCrashRow() && r.CrashWatch != nil && len(r.CrashWatch.Failed) == 0 && r.CrashWatch.Nodes > 0 {
				watched = append(watched, cleanRun{sc.Dir, r})
			}
			for _, o := range Of(r) {
				sig, old := o.Signature, false
				if n, ok := renamed[sig]; ok {
					sig, old = n, true
				}
				if !o.Shows {
					note(clean, sig, sc.Dir, r)
					continue
				}
				f := by[sig]
				seen := Seen{At: sc.Run.Started, Run: sc.Dir, Build: buildName(r)}
				if f == nil {
					f = &Finding{ID: ID(sig), Signature: sig, Kind: o.Kind, Suite: SuiteOf(sig), Check: o.Check,
						Title: o.Title, Example: o.Example, FirstSeen: seen}
					if o.Kind != KindCheck {
						f.Suite = o.Suite
					}
					by[sig] = f
					oldTitle[sig] = old
				}
				if oldTitle[sig] && !old {
					f.Title, oldTitle[sig] = o.Title, false // the new suite's own words
				}
				f.LastSeen = seen
				if o.Evidence != "" {
					f.Evidence = appendOnce(f.Evidence, filepath.Join(sc.Dir, o.Evidence))
				}
				note(shows, sig, sc.Dir, r)
				if o.Kind == KindCrash {
					if crashSuites[o.Signature] == nil {
						crashSuites[o.Signature] = map[string]bool{}
					}
					crashSuites[o.Signature][r.Suite] = true
				}
			}
		}
	}
	for sig, suites := range crashSuites {
		for _, w := range watched {
			if suites[w.r.Suite] && !metCrash(w.r, sig) {
				note(clean, sig, w.dir, w.r)
			}
		}
	}
	var out []Finding
	for sig, f := range by {
		f.Shows = builds(shows[sig], nil)
		f.Clean = builds(clean[sig], shows[sig])
		f.Status = marks.Of(sig)
		sort.Strings(formerly[sig])
		f.Formerly = formerly[sig]
		for _, old := range f.Formerly {
			if _, marked := marks[sig]; !marked {
				if s, ok := marks[old]; ok {
					f.Status = s // marked before the split, under the old signature
				}
			}
		}
		if f.Status.State == StateFixed && !f.Status.At.IsZero() && f.LastSeen.At.After(f.Status.At) {
			f.Regressed = true
		}
		out = append(out, *f)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].FirstSeen.At.Equal(out[j].FirstSeen.At) {
			return out[i].FirstSeen.At.Before(out[j].FirstSeen.At)
		}
		return out[i].Signature < out[j].Signature
	})
	return out
}

// splitRenames maps each check signature recorded under a suite that was
// split (report.SplitFrom) to the signature of the same check under the
// one suite split from it whose runs recorded that check: one bug is then
// one finding, whichever side of the split a run was recorded on. A check
// no run after the split recorded keeps its old signature: no run says
// which suite took it.
func splitRenames(runs []Scanned) map[string]string {
	checks := map[string]Observation{} // every check signature observed, shown or not
	for _, sc := range runs {
		for _, r := range sc.Run.Results {
			for _, o := range Of(r) {
				if o.Kind == KindCheck {
					checks[o.Signature] = o
				}
			}
		}
	}
	out := map[string]string{}
	for sig, o := range checks {
		var into []string
		for other := range checks {
			if other != sig && o.Is(other) { // report.Answers(o.Suite, other's suite)
				into = append(into, other)
			}
		}
		if len(into) == 1 {
			out[sig] = into[0]
		}
	}
	return out
}

func metCrash(r report.Result, sig string) bool {
	for _, c := range r.Crashes {
		if CrashSignature(c) == sig {
			return true
		}
	}
	return false
}

func buildName(r report.Result) string {
	if r.Name != "" {
		return r.Name
	}
	return r.Build
}

func note(m map[string]map[string]*Build, sig, dir string, r report.Result) {
	if m[sig] == nil {
		m[sig] = map[string]*Build{}
	}
	name := buildName(r)
	b := m[sig][name]
	if b == nil {
		b = &Build{Name: name, Version: r.Version, Spec: r.Build}
		m[sig][name] = b
	}
	b.Runs++
	b.LastRun = dir
}

// builds lists a map's builds by name; those in also (a build that showed
// the finding) are left out: a build that shows a finding once shows it,
// whatever other runs missed.
func builds(m, also map[string]*Build) []Build {
	var out []Build
	for name, b := range m {
		if also[name] != nil {
			continue
		}
		out = append(out, *b)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func appendOnce(xs []string, x string) []string {
	for _, y := range xs {
		if y == x {
			return xs
		}
	}
	return append(xs, x)
}

// Find picks the finding a user named: its id (or a unique prefix of it)
// or its whole signature.
func Find(fs []Finding, name string) (Finding, error) {
	var hits []Finding
	for _, f := range fs {
		if f.Signature == name || f.ID == name {
			return f, nil
		}
		for _, old := range f.Formerly { // a signature or id given before the split
			if old == name || ID(old) == name {
				return f, nil
			}
		}
		if len(name) >= 4 && strings.HasPrefix(f.ID, name) {
			hits = append(hits, f)
		}
	}
	switch len(hits) {
	case 1:
		return hits[0], nil
	case 0:
		var ids []string
		for _, f := range fs {
			ids = append(ids, f.ID+" "+f.Signature)
		}
		if len(ids) == 0 {
			return Finding{}, fmt.Errorf("no finding %q: the runs hold no findings", name)
		}
		if len(ids) > 20 {
			ids = append(ids[:20], fmt.Sprintf("and %d more", len(ids)-20))
		}
		return Finding{}, fmt.Errorf("no finding %q; the runs hold: %s", name, strings.Join(ids, "; "))
	}
	return Finding{}, fmt.Errorf("%q names %d findings: give more of the id", name, len(hits))
}

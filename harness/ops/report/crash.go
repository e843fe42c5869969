package report

import (
	"github.com/harp-project/harp/harness/core/verdict"
)

// IsCrashRow says whether a result is a build's crash row, not a suite's.
func (r Result) IsCrashRow() bool { return r.Suite == verdict.CrashSuite }

// CrashRow is the crash row of one build from its suites' results: every
// process that died in any of their runs, judged by verdict.CrashVerdict.
// ok is false when no HAProxy node was looked at: the build could not be
// made, every suite stopped before starting one (a machine that cannot
// show its bug), or the run was written before harp looked.
func CrashRow(rs []Result) (row Result, ok bool) {
	var (
		watch   verdict.CrashWatch
		crashes []verdict.Crash
		runs    int
	)
	for _, r := range rs {
		if r.IsCrashRow() || (r.CrashWatch == nil && len(r.Crashes) == 0) {
			continue
		}
		if !ok {
			row = Result{Suite: verdict.CrashSuite, Title: verdict.CrashTitle, Build: r.Build, Image: r.Image, Origin: r.Origin,
				Version: r.Version, Name: r.Name, VV: r.VV, Noun: "suite runs"}
			ok = true
		}
		runs++
		if r.CrashWatch != nil {
			watch.Add(*r.CrashWatch)
		}
		for _, c := range r.Crashes {
			if c.Suite == "" {
				c.Suite = r.Suite
			}
			crashes = append(crashes, c)
		}
	}
	if !ok || (watch.Nodes == 0 && len(watch.Failed) == 0 && len(crashes) == 0) {
		return Result{}, false
	}
	row.Verdict, row.TrialsViolated, row.Reason = verdict.CrashVerdict(crashes, watch, runs)
	row.TrialsRun, row.Crashes, row.CrashWatch = runs, crashes, &watch
	return row, true
}

// CrashRows gives results with one crash row per build, after the suites'
// results (in the order builds first appear); crash rows already there are
// made again from the suites' results (a merge of shards that each had
// their own).
func CrashRows(results []Result) []Result {
	var out []Result
	byBuild := map[string][]Result{}
	var order []string
	for _, r := range results {
		if r.IsCrashRow() {
			continue
		}
		out = append(out, r)
		key := r.Build + "\x00" + r.Name
		if _, seen := byBuild[key]; !seen {
			order = append(order, key)
		}
		byBuild[key] = append(byBuild[key], r)
	}
	for _, k := range order {
		if row, ok := CrashRow(byBuild[k]); ok {
			out = append(out, row)
		}
	}
	return out
}

// WithoutCrashRows drops the crash rows: what a shard's cell count counts.
func WithoutCrashRows(results []Result) []Result {
	var out []Result
	for _, r := range results {
		if !r.IsCrashRow() {
			out = append(out, r)
		}
	}
	return out
}

// junitClass is a JUnit testcase's class: harp.issue<ID> for a suite,
// harp.crash for a build's crash row.
func junitClass(r Result) string {
	if r.IsCrashRow() {
		return "harp." + verdict.CrashSuite
	}
	return "harp.issue" + r.Suite
}

package history

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/harp-project/harp/harness/ops/findings"
)

// Unit is one piece of a scoreboard run: one suite on the builds its
// catches need, one trial of each cell (a matrix run of its own). Units
// are what a scoreboard shards, and what it resumes by.
type Unit struct {
	Phase  string   `json:"phase"` // releases, or commits
	Suite  string   `json:"suite"`
	Builds []string `json:"builds"` // git:REPO@REF specs
	Trial  int      `json:"trial"`  // 1..trials
	Fixes  []string `json:"fixes"`  // the fixes its cells judge (short ids)
}

// Name is the unit's directory under the scoreboard's reports.
func (u Unit) Name() string {
	return fmt.Sprintf("%s/%s/trial-%d", u.Phase, u.Suite, u.Trial)
}

// Phases of a scoreboard: every catch on its bad and fixed releases, then
// on the fix's parent and the fix where the releases did not catch it
// (the bug came and went between them, or they cannot tell it apart).
const (
	PhaseReleases = "releases"
	PhaseCommits  = "commits"
)

// PlanReleases is the first phase: for every observable fix whose
// judgement names a check harp has, that check's suite on the bad and the
// fixed release, trials times.
func PlanReleases(fixes []Fix, js map[string]Judgement, repo string, trials int) []Unit {
	builds := map[string]map[string]bool{}
	judges := map[string]map[string]bool{}
	for _, f := range fixes {
		j, ok := judgementOf(js, f.Commit)
		if !ok || !j.Observable || !j.Caught() || f.Bad == "" || f.Fixed == "" {
			continue
		}
		for _, sig := range strings.Split(j.Catch, ",") {
			base, fl := splitFlavor(sig)
			if s := findings.SuiteOf(base); s != "" {
				add(builds, s, flavored(gitSpec(repo, f.Bad), fl), flavored(gitSpec(repo, f.Fixed), fl))
				add(judges, s, f.Short())
			}
		}
	}
	return units(PhaseReleases, builds, judges, trials)
}

// PlanCommits is the second phase, from the board the first one's runs
// make: for every fix with a check that the releases did not catch, its
// suite on the fix's parent and on the fix.
func PlanCommits(b Board, repo string, trials int) []Unit {
	builds := map[string]map[string]bool{}
	judges := map[string]map[string]bool{}
	for _, r := range b.Rows {
		if !r.Judged || !r.Observable || !r.Caught() || r.Status == Caught || r.Parent == "" {
			continue
		}
		for _, sig := range strings.Split(r.Catch, ",") {
			base, fl := splitFlavor(sig)
			if s := findings.SuiteOf(base); s != "" {
				add(builds, s, flavored(gitSpec(repo, r.Parent), fl), flavored(gitSpec(repo, r.Fix.Commit), fl))
				add(judges, s, r.Fix.Short())
			}
		}
	}
	return units(PhaseCommits, builds, judges, trials)
}

func gitSpec(repo, ref string) string { return "git:" + repo + "@" + ref }

func add(m map[string]map[string]bool, key string, vals ...string) {
	if m[key] == nil {
		m[key] = map[string]bool{}
	}
	for _, v := range vals {
		m[key][v] = true
	}
}

func units(phase string, builds, judges map[string]map[string]bool, trials int) []Unit {
	var suites []string
	for s := range builds {
		suites = append(suites, s)
	}
	sort.Strings(suites)
	var out []Unit
	for t := 1; t <= trials; t++ {
		for _, s := range suites {
			out = append(out, Unit{Phase: phase, Suite: s, Builds: slices.Sorted(maps.Keys(builds[s])), Trial: t, Fixes: slices.Sorted(maps.Keys(judges[s]))})
		}
	}
	return out
}

package failedreload

import (
	_ "embed"
	"slices"

	"fmt"
	"math"
	"strings"

	"github.com/harp-project/harp/harness/core/verdict"
	"github.com/harp-project/harp/harness/ops/findings"
	"github.com/harp-project/harp/harness/ops/report"
	"github.com/harp-project/harp/harness/ops/repro"
	reloadjudge "github.com/harp-project/harp/suites/conformance/failedreload/judge"
)

// reproScript is the reproducer's template, rendered with repro's shared helpers.
//
//go:embed repro.sh
var reproScript string

// The failed-reload checks the sh script judges, with what each reads.
var failedReloadChecks = map[string]string{
	reloadjudge.CheckMasterSurvives:  "the master is still running (and answers show proc) after the failed reload",
	reloadjudge.CheckCounted:         "show proc's failed counter counts the failed reload within the bound",
	reloadjudge.CheckOldWorkerKept:   "the worker from before the failed reload is still listed in show proc",
	reloadjudge.CheckNoNewWorker:     "no new current worker after the failed reload",
	reloadjudge.CheckOldWorkerServes: "the worker from before answers HTTP 200 after the failed reload",
	reloadjudge.CheckTableKept:       "that worker's table still holds keep-N with gpc0 N",
	reloadjudge.CheckTakesSignals:    "the master neither blocks SIGUSR2 nor leaves it pending (/proc/<master>/status)",
	reloadjudge.CheckNextReload:      "the next reload, with the good config back, starts a new worker within the bound",
	reloadjudge.CheckNewWorkerServes: "that new worker answers HTTP 200",
}

// failedReloadEvidence is what the script reads of a cycle's evidence:
// the part of the suite's Evidence (its facts and broken config) that
// holds no type of the suite's node.
type failedReloadEvidence struct {
	Facts  reloadjudge.Facts `json:"facts"`
	Broken string            `json:"broken_config"`
}

func matchFailedReload(f findings.Finding) bool {
	return f.Kind == findings.KindCheck && f.Suite == reloadjudge.SuiteID
}

func matchFailedReloadCrash(f findings.Finding) bool {
	return f.Kind == findings.KindCrash && f.Suite == reloadjudge.SuiteID && strings.HasPrefix(f.Signature, "crash/master/")
}

func failedReload(f findings.Finding, r report.Result) (repro.Repro, error) {
	base, brk, _ := strings.Cut(f.Check, ".")
	if _, ok := failedReloadChecks[base]; !ok {
		return repro.Repro{}, fmt.Errorf("unknown check %q of %s", base, reloadjudge.SuiteID)
	}
	last, ok := repro.FailedIn(r, f.Check)
	if !ok {
		return repro.Repro{}, fmt.Errorf("no cycle of the result on %s failed %s", repro.BuildName(r), f.Check)
	}
	return failedReloadScript(f, r, base, brk, last.N, checkText(last, f.Check))
}

// failedReloadCrash: a master that died in a failed-reload cycle is the
// master-survives check of the cycle it died in.
func failedReloadCrash(f findings.Finding, r report.Result) (repro.Repro, error) {
	evs, err := repro.Trials[failedReloadEvidence](r)
	if err != nil {
		return repro.Repro{}, err
	}
	for _, t := range repro.SortedTrials(r) {
		ev := evs[t.N]
		if m, ok := ev.Facts.Master.Get(); ok && m.Process == "master" {
			rp, err := failedReloadScript(f, r, reloadjudge.CheckMasterSurvives, ev.Facts.BreakID, t.N, fmt.Sprintf("the %s after the failed reload", m))
			rp.Reproduces = "the master's death after the failed reload of cycle " + fmt.Sprint(t.N) + " (the script sees its exit status; the crash's stack is in harp's evidence)"
			return rp, err
		}
	}
	return repro.Repro{}, fmt.Errorf("no cycle of the result on %s saw the master exit", repro.BuildName(r))
}

type cycle struct {
	N        int
	Break    string // its id (missing-map)
	Name     string // a missing map file
	Recovery string // SIGUSR2, or master CLI reload
	Judged   bool
}

func failedReloadScript(f findings.Finding, r report.Result, check, brk string, last int, text string) (repro.Repro, error) {
	evs, err := repro.Trials[failedReloadEvidence](r)
	if err != nil {
		return repro.Repro{}, err
	}
	good, err := repro.Localize(r.Config)
	if err != nil {
		return repro.Repro{}, err
	}
	web := "8080" // the suite's frontend
	if !slices.Contains(good.Ports, web) {
		return repro.Repro{}, fmt.Errorf("the recorded config has no port %s (the suite's frontend): ports %v", web, good.Ports)
	}
	if good.Sockets["admin"] == "" {
		return repro.Repro{}, fmt.Errorf("the recorded config has no admin stats socket")
	}
	files := []repro.File{{Name: "haproxy.cfg", Text: good.Config}}
	var cycles []cycle
	var bound float64
	seen := map[string]bool{}
	for _, t := range repro.SortedTrials(r) {
		if t.N > last {
			break
		}
		ev := evs[t.N]
		fa := ev.Facts
		if fa.Setup != "" {
			continue // it stopped before the break: nothing of it to replay
		}
		if fa.BreakID == "" {
			return repro.Repro{}, fmt.Errorf("cycle %d recorded no break id (a run older than the check ids that name the break)", t.N)
		}
		bound = math.Max(bound, fa.Bound.Seconds())
		cycles = append(cycles, cycle{N: t.N, Break: fa.BreakID, Name: fa.Break, Recovery: fa.Recovery, Judged: brk == "" || fa.BreakID == brk})
		if seen[fa.BreakID] {
			continue
		}
		seen[fa.BreakID] = true
		broken := ev.Broken
		if broken == "" {
			return repro.Repro{}, fmt.Errorf("cycle %d recorded no broken config", t.N)
		}
		lb, err := repro.Localize(broken)
		if err != nil {
			return repro.Repro{}, fmt.Errorf("cycle %d's broken config: %w", t.N, err)
		}
		files = append(files, repro.File{Name: "broken-" + fa.BreakID + ".cfg", Text: lb.Config})
	}
	if len(cycles) == 0 || !cycles[len(cycles)-1].Judged {
		return repro.Repro{}, fmt.Errorf("cycle %d, where %s failed, holds no replayable break", last, f.Check)
	}
	if bound < 1 {
		bound = 20
	}
	data := map[string]any{"Finding": f, "From": fmt.Sprintf("%s (%s), %s", repro.BuildName(r), r.Build, r.Evidence),
		"Check": check, "CheckText": text, "Break": brk, "Bound": int(math.Ceil(bound)), "Ports": strings.Join(good.Ports, " "),
		"WebPort": web, "Cycles": cycles}
	script, err := repro.Render("repro.sh", reproScript, data)
	if err != nil {
		return repro.Repro{}, err
	}
	files = append([]repro.File{{Name: "reproduce", Exec: true, Text: script}}, files...)
	does := []string{
		fmt.Sprintf("Copies `haproxy.cfg` to a temporary directory, picks free ports, checks `haproxy -c` accepts it, and starts `haproxy -W -db -f haproxy.cfg -S <dir>/master.sock`; it waits (up to %d s) for `show proc` on the master CLI to list a worker.", int(math.Ceil(bound))),
	}
	for _, c := range cycles {
		judge := "a setup cycle (harp's run went through it first)"
		if c.Judged {
			judge = fmt.Sprintf("judges %s: %s", check, failedReloadChecks[check])
		}
		does = append(does, fmt.Sprintf("Cycle %d, %s (`broken-%s.cfg`), recovery by %s: %s.", c.N, c.Name, c.Break, c.Recovery, judge))
	}
	does = append(does,
		"Each cycle: the current worker must answer HTTP 200; `set table tbl key keep-N data.gpc0 N` on it (master CLI `@!<pid>`); show proc's failed counter is read. `haproxy -c` must refuse the broken config (else INCONCLUSIVE: no break on this build); it is written over haproxy.cfg and the master gets SIGUSR2. show proc is polled until it counts one more failed reload (or the bound passes), the master watched meanwhile; then the check is read. Recovery: the good config back, the reload by SIGUSR2 or the master CLI's `reload`, and show proc must list a new worker within the bound.",
		fmt.Sprintf("REPRODUCED as soon as %s fails in a judged cycle; PASS when it held in every judged cycle; INCONCLUSIVE when a step it needs could not be made (the master died in a setup cycle, a socket never answered).", check))
	return repro.Repro{Lang: repro.Sh, Files: files, Does: does, Needs: "POSIX sh and its usual tools (awk, sed, grep; the script checks for each first), socat and Linux's /proc"}, nil
}

func checkText(t verdict.Trial, id string) string {
	for _, c := range t.Checks {
		if c.ID == id {
			return c.Text
		}
	}
	return ""
}

// The suite's reproducers: harp findings repro writes them for its checks
// and for a master's crash met in a cycle.
func init() {
	repro.Register(repro.Generator{Pattern: "conf-failed-reload/<check>.<break>", What: "every check of the failed-reload cycles (sh, socat)", Match: matchFailedReload, Make: failedReload})
	repro.Register(repro.Generator{Pattern: "crash/master/... met by conf-failed-reload", What: "a master that died in a failed-reload cycle (sh, socat)", Match: matchFailedReloadCrash, Make: failedReloadCrash})
}

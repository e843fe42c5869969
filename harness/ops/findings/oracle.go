package findings

import (
	"fmt"
	"strings"

	"github.com/harp-project/harp/harness/core/verdict"
	"github.com/harp-project/harp/harness/ops/report"
)

// SuiteOf is the suite a signature names ("conf-failed-reload" of
// "conf-failed-reload/master-survives"); "" for a crash, which any suite
// may meet.
func SuiteOf(sig string) string {
	if strings.HasPrefix(sig, "crash/") {
		return ""
	}
	suite, _, _ := strings.Cut(sig, "/")
	return suite
}

// Verdict judges one result by one finding alone: REPRODUCED when the
// result shows it, PASS when it was looked for and not seen (its check
// held in every trial that decided it; for a crash, the suite ran with
// every node watched and no such crash), else INCONCLUSIVE. So a suite
// that holds several bugs can be the oracle of a bisect for each of them:
// another check's failure is no answer about this one.
func Verdict(r report.Result, sig string) (v verdict.Verdict, reason string) {
	suite := fmt.Sprintf("the suite's verdict: %s (%s)", r.Verdict, report.OneLine(r.Reason))
	if r.Verdict == verdict.Error {
		return verdict.Error, suite
	}
	if strings.HasPrefix(sig, "crash/") {
		for _, c := range r.Crashes {
			if CrashSignature(c) == sig {
				return verdict.Reproduced, fmt.Sprintf("%s %d of %s died: %s; %s", c.ProcessKind(), c.PID, c.Node, strings.TrimPrefix(sig, "crash/"), suite)
			}
		}
		if w := r.CrashWatch; w != nil && len(w.Failed) == 0 && w.Nodes > 0 {
			return verdict.Pass, fmt.Sprintf("no such crash, %d nodes watched; %s", w.Nodes, suite)
		}
		return verdict.Inconclusive, "the crash watch did not see every node; " + suite
	}
	for _, o := range Of(r) {
		if !o.Is(sig) {
			continue
		}
		if o.Shows {
			return verdict.Reproduced, fmt.Sprintf("%s: %s; %s", sig, o.Example, suite)
		}
		return verdict.Pass, fmt.Sprintf("%s held in every trial that decided it; %s", sig, suite)
	}
	return verdict.Inconclusive, fmt.Sprintf("%s was not observed; %s", sig, suite)
}

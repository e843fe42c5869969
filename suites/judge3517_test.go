package suites_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/harp-project/harp/suites"
)

type m = suites.Marker3517

var kept = m{Present: true, GPC0: "1"}

// How one #3517 round is judged from what it observed; no HAProxy needed.
var _ = DescribeTable("judging a #3517 round", Label("issue:3517", "unit"),
	func(f suites.RoundFacts3517, violation, unmet, remark string) {
		f.OldPID = 8
		v, u, r := suites.Judge3517(f)
		Expect([]string{v, u, r}).To(Equal([]string{violation, unmet, remark}))
	},
	Entry("both markers kept: held", suites.RoundFacts3517{OldExited: true, Markers: map[string]m{"first/marker": kept, "second/marker": kept}}, "", "", ""),
	Entry("one section not taught: the issue", suites.RoundFacts3517{OldExited: true, Markers: map[string]m{"first/marker": {}, "second/marker": kept}},
		"first/marker lost", "", ""),
	Entry("a wrong value is a violation too", suites.RoundFacts3517{OldExited: true, Markers: map[string]m{"first/marker": {Present: true, GPC0: "0"}, "second/marker": kept}},
		"first/marker gpc0=0 (want 1)", "", ""),
	Entry("every marker lost is not this issue's signature", suites.RoundFacts3517{OldExited: true, Markers: map[string]m{"first/marker": {}, "second/marker": {}}},
		"", "every marker lost: the old process taught no section, which is not this issue's signature", ""),
	Entry("a table that cannot be read is never a violation", suites.RoundFacts3517{OldExited: true, Markers: map[string]m{"first/marker": {Err: "show table: i/o timeout"}, "second/marker": kept}},
		"", "after reload: first/marker could not be read: show table: i/o timeout", ""),
	Entry("an old worker that never left cannot be judged", suites.RoundFacts3517{Markers: map[string]m{"first/marker": {}, "second/marker": kept}},
		"", "old worker 8 still running 20s after SIGUSR2: how it ended cannot be judged", ""),
	Entry("a crash with a loss: cannot tell which", suites.RoundFacts3517{OldExited: true, OldCrash: "old worker 8 exited with code 139 (Segmentation fault) during soft-stop",
		Markers: map[string]m{"first/marker": {}, "second/marker": kept}},
		"", "old worker 8 exited with code 139 (Segmentation fault) during soft-stop, and first/marker lost: the loss may come from the crash", ""),
	Entry("a crash after teaching everything: a remark", suites.RoundFacts3517{OldExited: true, OldCrash: "old worker 8 exited with code 139",
		Markers: map[string]m{"first/marker": kept, "second/marker": kept}}, "", "", "old worker crashed after teaching its tables"),
	Entry("the current worker died", suites.RoundFacts3517{OldExited: true, Died: "current worker 9 exited with code 134 (Aborted)",
		Markers: map[string]m{"first/marker": kept, "second/marker": kept}}, "", "current worker 9 exited with code 134 (Aborted)", ""),
)

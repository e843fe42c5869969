//go:build selftest

// selftest: together

package manytables_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/harp-project/harp/harness/core/verdict"
	"github.com/harp-project/harp/harness/ops/report"
	"github.com/harp-project/harp/harness/ops/selftest"
	"github.com/harp-project/harp/suites/conformance/manytables"
)

func TestSelf(t *testing.T) { selftest.Run(t, "conf-many-tables on real builds") }

var mutant = "src:deb:3.0.11,patch=" + selftest.Mutant("4-many-tables-8bit-lookup.diff")

// Observed: with 300 tables two 2.6.12 nodes never finish their initial
// resync (200 tables do); 3.x builds learn every entry every way; the
// mutant ignores the definitions of tables past the 255th.
var _ = selftest.Describe(manytables.Suite, func() {
	selftest.VerdictsTogether(manytables.Suite, func(b selftest.Build, r report.Result) {
		switch r.Verdict {
		case verdict.Pass:
			for _, t := range r.Trials {
				Expect(t.Evidence.(*manytables.Evidence).Facts.Took).To(BeNumerically(">", 0))
			}
		case verdict.Reproduced:
			if b.Spec == "deb:bookworm | BOUND=10s" {
				Expect(r.Reason).To(HavePrefix("initial resync: with 300 tables the nodes did not mesh and finish their initial resync"), r.Line())
				reportFits(r)
			} else {
				Expect(r.TrialsViolated).To(Equal(3), r.Line())
				Expect(r.Reason).To(ContainSubstring("100 of 100 entries missing or wrong"), r.Line())
			}
		}
	},
		selftest.Build{Spec: "deb:bookworm | BOUND=10s", Want: verdict.Reproduced, Why: "2.6.12 never finishes its initial resync with 300 tables"},
		selftest.On(selftest.Trixie, verdict.Pass, ""),
		selftest.On(selftest.Sid, verdict.Pass, ""),
		selftest.On(selftest.Experimental, verdict.Pass, ""),
		selftest.Build{Spec: mutant + " | BOUND=10s", Want: verdict.Reproduced, Why: "the mutant drops the definitions of tables past the 255th"},
	)
}, Label("slow"))

// reportFits writes 2.6.12's run as harp does (issue #24: this cell alone
// once made a 59 MB report.md): report.md and report.html stay within the
// budgets, and the evidence holds every folded transcript whole.
func reportFits(r report.Result) {
	GinkgoHelper()
	run := report.Run{ID: "manytables", Results: []report.Result{r}}
	dir, err := report.Write(GinkgoT().TempDir(), run)
	Expect(err).NotTo(HaveOccurred())
	ev := filepath.Join(dir, run.Results[0].Evidence)
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	Expect(err).NotTo(HaveOccurred())
	page, err := os.ReadFile(filepath.Join(dir, "report.html"))
	Expect(err).NotTo(HaveOccurred())
	GinkgoWriter.Printf("2.6.12's report: report.md %d bytes, report.html %d bytes\n", len(md), len(page))
	Expect(len(md)).To(BeNumerically("<=", report.CellBudget+64<<10))
	Expect(len(page)).To(BeNumerically("<=", report.CellBudget+64<<10))
	folded := 0
	for _, t := range r.Trials {
		full := report.TranscriptText(t.Exchanges)
		if strings.Count(full, "\n") <= 2*(report.FoldHead+report.FoldTail) {
			continue
		}
		folded++
		name := fmt.Sprintf("trial-%02d-transcript.txt", t.N)
		kept, err := os.ReadFile(filepath.Join(ev, name))
		Expect(err).NotTo(HaveOccurred(), "check %d: its transcript (%d lines) is folded, its full text is kept", t.N, strings.Count(full, "\n"))
		Expect(string(kept) == full).To(BeTrue(), "check %d: %s holds %d of the transcript's %d bytes", t.N, name, len(kept), len(full))
		Expect(string(md)).To(ContainSubstring("lines folded: full text in [%s/%s]", run.Results[0].Evidence, name))
	}
	Expect(folded).To(BeNumerically(">", 0), "2.6.12's polls of 300 tables make a transcript long enough to fold")
}
